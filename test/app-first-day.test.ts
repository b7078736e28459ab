// An owner's first day, all in the browser, as the "done when" names it: a fresh device set up
// through the wizard, a key created, a message encrypted and decrypted with it, and the audit log
// verified, nothing else used. The time from the wizard to the first encrypt is noted.
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { openFreshApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { done, outputOf } from './helpers/keyops.js'
import { MASTER_PASS, USER_PASS } from './helpers/owner.js'

const MESSAGE = 'first light, first key'

t.test('from a fresh device to a verified audit log, in the browser only', { skip: noChromium }, async (t) => {
  const app = await openFreshApp(t)
  const { page } = app
  const started = performance.now()
  await page.locator('#setup-attestation').waitFor()
  await page.getByRole('button', { name: 'Next: make it yours' }).click()
  await page.getByLabel('Owner name').fill('Ada Lovelace')
  await page.getByLabel('Contact e-mail').fill('ada@example.com')
  await page.getByLabel('User passphrase', { exact: true }).fill(USER_PASS)
  await page.getByLabel('Repeat the user passphrase').fill(USER_PASS)
  await page.getByLabel('Master passphrase', { exact: true }).fill(MASTER_PASS)
  await page.getByLabel('Repeat the master passphrase').fill(MASTER_PASS)
  await page.getByLabel('Host name').fill('hem.example')
  await page.getByRole('button', { name: 'Set up the device' }).click()
  await page.locator('#screen-title', { hasText: 'Dashboard' }).waitFor({ timeout: 60_000 })
  const setUp = performance.now()
  t.match(await page.locator('#who').textContent(), /^Logged in as Ada Lovelace/, 'set up and logged in')

  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Keys', exact: true }).click()
  await page.getByRole('button', { name: 'Create a key', exact: true }).click()
  const create = page.getByRole('region', { name: 'Create a key' })
  await create.getByLabel('Type').selectOption('AES256')
  await create.getByLabel('Label').fill('first key')
  await create.getByRole('button', { name: 'Create key' }).click()
  const created = page.getByRole('status').filter({ hasText: '“first key”' })
  await created.waitFor()
  const kid = /KID ([0-9a-f]{32})/.exec((await created.textContent()) ?? '')?.[1]
  t.match(kid, /^[0-9a-f]{32}$/, 'a key created')

  await page.getByRole('button', { name: new RegExp(`^Open key first key \\(${kid}\\)$`) }).click()
  const uses = page.getByRole('region', { name: 'Use this key' })
  const encrypt = uses.locator('details.key-use').filter({ has: page.locator('summary', { hasText: /^Encrypt$/ }) })
  await encrypt.locator('summary').click()
  await encrypt.getByLabel('Message', { exact: true }).fill(MESSAGE)
  await encrypt.getByRole('button', { name: 'Encrypt' }).click()
  await done(page, /^Encrypted \d+ bytes with AES256-GCM\.$/)
  const encrypted = performance.now()
  t.equal((await outputOf(encrypt, 'Ciphertext')).length, Buffer.byteLength(MESSAGE), 'encrypted')

  await encrypt.getByRole('button', { name: 'Decrypt it in the form below' }).click()
  const decrypt = uses.locator('details.key-use').filter({ has: page.locator('summary', { hasText: /^Decrypt$/ }) })
  await decrypt.getByRole('button', { name: 'Decrypt' }).click()
  await done(page, /^Decrypted \d+ bytes with AES256-GCM\.$/)
  t.equal(await decrypt.locator('pre.op-text').textContent(), MESSAGE, 'decrypted back to the message')

  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log', exact: true }).click()
  await page.getByRole('button', { name: 'Verify all files' }).click()
  await page.getByRole('status').filter({ hasText: 'Verification done.' }).waitFor()
  t.match(
    await page.locator('#verdict').textContent(),
    /^Verified: all \d+ files?, \d+ records/,
    'the audit log verified',
  )
  const lines = await page.locator('ol.timeline > li').allTextContents()
  t.ok(
    lines.some((line) => line.includes('device personalised')) && lines.some((line) => line.includes(`kid=${kid}`)),
    'its timeline tells the set-up and the key',
  )
  t.same(app.problems, [], 'no script error and no CSP violation')
  t.comment(
    `from the wizard to the dashboard ${((setUp - started) / 1000).toFixed(1)} s, ` +
      `to the first encrypt ${((encrypted - started) / 1000).toFixed(1)} s (the test's typing included)`,
  )
})
