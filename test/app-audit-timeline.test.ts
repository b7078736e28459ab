// The audit timeline as an owner reads it: logins of one scope and minute folded into one line, keys
// named beside their KIDs, refused logins under a who of their own, record numbers said to be hex,
// the log key pinned per device at the first verification and a changed one warned of; and a check
// not yet run shown neutral, not as a success.
import t from 'tap'
import { openApp, type OpenApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { api } from './helpers/keys.js'
import { login, loginAnswer } from './helpers/owner.js'

const PINS = 'hem.log-key-pins'

/** The page's storage and styles, as the page's own globals (this file is compiled without the DOM's types). */
interface PageGlobals {
  localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void }
  getComputedStyle(element: unknown): { backgroundColor: string }
}

async function verify(app: OpenApp): Promise<string> {
  const { page } = app
  await page.getByRole('button', { name: 'Verify all files' }).click()
  await page.getByRole('status').filter({ hasText: 'Verification done.' }).waitFor()
  return (await page.locator('#verdict').textContent()) ?? ''
}

t.test(
  'the timeline folds logins, names keys and refused logins; the log key is pinned',
  { skip: noChromium },
  async (t) => {
    const app = await openApp(t)
    const { o, page } = app
    const maker = await login(o.base, 'keymgmt:gen')
    const created = await api(`${o.https}/api/keymgmt/create`, maker, { label: 'Payroll signing', type: 'ED25519' })
    t.equal(created.status, 200)
    const kid = (created.json as { kid: string }).kid
    for (let i = 0; i < 4; i++) await login(o.base, 'keymgmt:list')
    t.equal((await loginAnswer(o.base, 'system:config', 'not the passphrase')).status, 401)

    await app.logIn()
    await app.go('Audit log')
    const verdict = await verify(app)
    t.match(verdict, /^Verified: .*record [0-9a-f]+; record numbers are hexadecimal, as the journal writes them\)\.$/)
    t.match(await page.locator('.timeline-panel .hint').textContent(), 'file:record, both in hexadecimal')

    const lines = page.locator('ol.timeline > li')
    const listLogins = await lines.filter({ hasText: 'scope=keymgmt:list' }).allTextContents()
    const counted = listLogins.map((text) => Number(/×(\d+)/.exec(text)?.[1] ?? 1))
    t.equal(
      counted.reduce((a, b) => a + b, 0),
      4,
      'the four logins for keymgmt:list are all told',
    )
    t.ok(listLogins.length <= 2, `in one line per minute (${listLogins.length})`)
    t.match(await page.locator('.timeline-count').textContent(), /events in \d+ lines/)

    const generated = lines.filter({ hasText: `kid=${kid}` }).first()
    t.equal(await generated.locator('q.label').textContent(), 'Payroll signing', 'the key’s label beside its KID')

    const who = page.getByLabel('Who')
    await who.selectOption({ label: 'unknown (failed login)' })
    const refused = await lines.allTextContents()
    t.ok(refused.length >= 1, 'the refused login has a who of its own')
    t.ok(
      refused.every((text) => text.includes('unknown (failed login)') && text.includes('FAILED 401')),
      'and only refused logins are under it',
    )
    await who.selectOption({ label: 'device' })
    const own = await lines.allTextContents()
    t.notOk(
      own.some((text) => text.includes('FAILED 401')),
      'the device’s own events leave refused logins out',
      { own },
    )
    await who.selectOption('')

    const devid = Object.keys(
      JSON.parse(
        (await page.evaluate((k) => (globalThis as unknown as PageGlobals).localStorage.getItem(k), PINS)) ?? '{}',
      ),
    )[0]
    t.match(devid, /^[0-9a-f]{16}$/, 'the log key is pinned under the device’s devid')
    t.match(await page.locator('.pin').textContent(), `Log key pinned for device ${devid}`)
    t.same(await app.violations(), [], 'the timeline passes the accessibility check')
    await page.emulateMedia({ colorScheme: 'dark' })
    t.same(await app.violations(), [], 'and in the dark palette')
    await page.emulateMedia({ colorScheme: 'light' })

    await verify(app)
    t.match(await page.locator('.pin').textContent(), `The log key is the one pinned for device ${devid} since`)

    // Another key pinned for this devid: as if another device answered under this one's name.
    await page.evaluate(
      ([k, id]) =>
        (globalThis as unknown as PageGlobals).localStorage.setItem(
          k!,
          JSON.stringify({ [id!]: { key: 'A'.repeat(43) + '=', since: 1 } }),
        ),
      [PINS, devid],
    )
    await verify(app)
    const warning = page.locator('.pin.changed')
    t.match(await warning.textContent(), 'WARNING: the log key changed.')
    t.match(await warning.textContent(), `Pinned: ${'A'.repeat(43)}=`)
    t.same(await app.violations(), [], 'the warning passes the accessibility check')
    await warning.getByRole('button', { name: 'Pin the new key' }).click()
    await page.getByText(`The new log key is pinned for device ${devid}.`).waitFor()
    await verify(app)
    t.match(await page.locator('.pin').textContent(), 'is the one pinned')
    t.same(app.problems, [], 'no script error or CSP violation')
  },
)

t.test('a check not run yet looks neutral, not like a success', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page } = app
  await app.logIn()
  await app.go('Upgrades')
  const verdict = page.locator('.verdict').first()
  t.equal(await verdict.textContent(), 'Not checked yet.')
  t.equal(await verdict.getAttribute('class'), 'verdict', 'neither verified nor failed')
  const background = await verdict.evaluate(
    (p) => (globalThis as unknown as PageGlobals).getComputedStyle(p).backgroundColor,
  )
  t.equal(background, 'rgba(0, 0, 0, 0)', 'no success colour behind it')
  t.same(app.problems, [], 'no script error or CSP violation')
})
