// The settings screen's configuration form in Chromium: what it shows is what the API says, a
// change reaches the device, and a value against the device's rule is refused before sending.
import t from 'tap'
import type { Page, Request } from 'playwright-core'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api } from './helpers/keys.js'
import { login } from './helpers/owner.js'
import { until } from './helpers/until.js'

/** The POSTs to the configuration the page sent from now on. */
function configPosts(page: Page): Request[] {
  const sent: Request[] = []
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/system/config') sent.push(request)
  })
  return sent
}

t.test('settings: read, change, refuse before sending', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const token = await login(o.base, 'system:config')
  const config = async () => (await api(`${o.base}/api/system/config`, token)).json as Record<string, unknown>
  const before = await config()
  await app.logIn()
  await app.go('Settings')
  t.same(await app.violations(), [], 'the settings screen passes the accessibility check')

  const fixed = page.locator('#device-identity')
  for (const [label, field] of [
    ['Host name (fixed at personalisation)', 'hostname'],
    ['IP address (fixed at personalisation)', 'ip'],
    ['Device id', 'devid'],
    ['Instance id', 'instanceid'],
    ['Secure enclave serial number', 'genuine_id'],
    ['Identity public key (eid)', 'eid'],
    ['Audit log signing key (eid_sign)', 'eid_sign'],
    ['microSD card capacity (sectors)', 'storage_capacity'],
  ] as const)
    t.equal(
      await fixed.locator(`dt:text-is("${label}") + dd`).textContent(),
      String(before[field]),
      `${field} as the API says`,
    )
  t.equal(
    await fixed.locator('dt:text-is("Last configuration change") + dd').textContent(),
    new Date((before.uts as number) * 1000).toISOString(),
  )
  const texts = {
    'Owner name': 'user',
    'Contact e-mail': 'email',
    'Allowed web origin (CORS)': 'origin',
    'Instance context id': 'ctx',
    'Request time limit (in half seconds)': 'http_option_dosprot_mode',
    'Disk 0 size (512-byte sectors)': 'storage_disk0size',
  } as const
  for (const [label, field] of Object.entries(texts))
    t.equal(await page.getByLabel(label, { exact: true }).inputValue(), String(before[field]), `${field} shown`)
  for (const [label, field] of [
    ['Send HSTS headers', 'http_option_hsts'],
    ['Built-in DNS server', 'dnsd'],
    ['Key search without login', 'allow_keysearch'],
    ['Backend is a trusted time source', 'trusted_ts'],
    ['Backend is trusted and may control this device', 'trusted_backend'],
  ] as const)
    t.equal(await page.getByLabel(label).isChecked(), before[field], `${field} shown`)
  t.equal(await page.getByLabel('Disk mode at power-up').inputValue(), String(before.storage_mode))
  t.match(
    await page.getByText('Must be printable text of at most 64 characters.').first().textContent(),
    /64 characters/,
    "the device's rule is the field's hint",
  )

  const posts = configPosts(page)
  const owner = page.getByLabel('Owner name', { exact: true })
  const save = page.getByRole('button', { name: 'Save the configuration' })
  const alert = page.getByRole('alert')
  await owner.fill('A'.repeat(65))
  await page.getByLabel('Request time limit (in half seconds)').fill('300')
  await page.getByLabel('Allowed web origin (CORS)').fill('ftp://nope')
  t.equal(await owner.getAttribute('aria-invalid'), 'true', 'an owner name of 65 characters is marked while typed')
  await save.click()
  await alert.waitFor()
  t.equal(await alert.textContent(), 'Nothing was sent: correct the fields marked first.')
  t.equal(
    await page.evaluate(() => {
      const { document } = globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string } } }
      return document.activeElement.getAttribute('name')
    }),
    'user',
    'focus on the first',
  )
  for (const [label, message] of [
    ['Owner name', 'Must be printable text of at most 64 characters.'],
    ['Request time limit (in half seconds)', 'Must be an integer from 0 to 255.'],
    ['Allowed web origin (CORS)', 'Must be *, an http(s) origin, or *.domain.tld.'],
  ] as const) {
    const input = page.getByLabel(label, { exact: true })
    t.equal(await input.getAttribute('aria-invalid'), 'true', `${label}: marked`)
    const ids = (await input.getAttribute('aria-describedby'))!.split(' ')
    const said = await Promise.all(ids.map((id) => page.locator(`#${id}`).textContent()))
    t.ok(said.includes(message), `${label}: "${message}" describes it`)
  }
  t.same(await app.violations(), [], 'the marked form passes the accessibility check')
  t.equal(posts.length, 0, 'nothing was sent')

  await owner.fill('Grace Hopper')
  await page.getByLabel('Request time limit (in half seconds)').fill('4')
  await page.getByLabel('Allowed web origin (CORS)').fill('*.example.org')
  await page.getByLabel('Built-in DNS server').check()
  await page.getByLabel('Disk mode at power-up').selectOption('83')
  t.equal(await owner.getAttribute('aria-invalid'), null, 'a valid value is no longer marked')
  await save.click()
  const notice = page.getByRole('status')
  await notice.filter({ hasText: 'Saved:' }).waitFor()
  t.equal(
    await notice.textContent(),
    'Saved: owner name, allowed web origin (cors), request time limit (in half seconds), built-in dns server, ' +
      'disk mode at power-up.',
  )
  t.equal(posts.length, 1, 'one request')
  t.same(
    posts[0]!.postDataJSON(),
    { user: 'Grace Hopper', origin: '*.example.org', http_option_dosprot_mode: 4, dnsd: true, storage_mode: 0x53 },
    'only the changed fields are sent',
  )
  const after = await config()
  t.match(after, { user: 'Grace Hopper', origin: '*.example.org', http_option_dosprot_mode: 4, dnsd: true })
  t.equal(after.storage_mode, 0x53)
  t.ok((after.uts as number) > (before.uts as number), 'uts moved on')
  t.equal(
    await fixed.locator('dt:text-is("Last configuration change") + dd').textContent(),
    new Date((after.uts as number) * 1000).toISOString(),
    'the screen shows the new uts',
  )

  await save.click()
  await notice.filter({ hasText: 'Nothing to save' }).waitFor()
  t.equal(posts.length, 1, 'an unchanged form sends nothing')

  // A new Disk 0 size reformats both disks: not without the owner's tick.
  const reformat = page.getByLabel('Reformat both disks: erase everything on them')
  t.ok(await reformat.isHidden(), 'no reformat asked while the size stays')
  await page.getByLabel('Disk 0 size (512-byte sectors)').fill('100000')
  t.ok(await reformat.isVisible(), 'a new size asks for the reformat')
  await save.click()
  await alert.waitFor()
  t.equal(await reformat.getAttribute('aria-invalid'), 'true', 'not without the tick')
  t.equal(posts.length, 1, 'and nothing was sent')
  await reformat.check()
  await save.click()
  await notice.filter({ hasText: 'Saved: disk 0 size' }).waitFor()
  t.equal((await config()).storage_disk0size, 100000, 'the new size reached the device')
  t.ok(await reformat.isHidden(), 'the tick goes once saved')
  // The reformat runs on after the answer: the test ends with it, not with the device still writing its disks.
  await until('the disks reformatted at the new size', async () => {
    const status = (await api(`${o.base}/api/system/status`, undefined)).json
    return status.format === 'done' && String(status.storage?.[0]).startsWith('100000:')
  })
  t.same(app.problems, [], 'no script error and no CSP violation')
})
