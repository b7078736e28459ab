// The health screen in Chromium against a DIAG device: the self-test run and each field said in
// words; then a fault drill (break_temp, break_trng) and the fail state shown in words on the
// dashboard's banner and the health screen, with the disks refused (409) while it lasts.
import t from 'tap'
import type { Page } from 'playwright-core'
import { FLS } from '../protocol/fail-state.js'
import { openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { diagOk, flsShown, selfTest } from './helpers/diag.js'
import { api } from './helpers/keys.js'
import { login } from './helpers/owner.js'

function field(page: Page, list: string, name: string): Promise<string | null> {
  return page
    .locator(`#${list} dt`, { hasText: new RegExp(`^${name}$`) })
    .locator('xpath=following-sibling::dd[1]')
    .textContent()
}

const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC'
const TEMPERATURE = 'failed: the temperature is out of range (fls_state 0x4)'

t.test('the self-test, then a fault drill, in words', { skip: noChromium }, async (t) => {
  const app = await openApp(t, { boot: { diag: true } })
  const { page, o } = app
  await app.logIn()
  await app.go('Health')
  const now = page.locator('#health-now')
  t.equal(await now.textContent(), 'Now: secure: no fault (fls_state 0x0).', 'the state now, in words')
  t.equal(await page.locator('#fail-bits').count(), 0, 'no fail bits to explain')
  t.same(await app.violations(), [], 'the health screen passes the accessibility check')

  const run = async () => {
    await page.getByRole('button', { name: 'Run the self-test' }).click()
    await page
      .getByRole('status')
      .filter({ hasText: /^The self-test (passed|found)/ })
      .waitFor()
  }
  await run()
  t.equal(await page.locator('#selftest-result p').first().textContent(), 'Passed: no fault.')
  const answer = (await selfTest(o.base, await login(o.base, 'logger:get'))).json
  t.equal(await field(page, 'selftest', 'Fail state after it'), 'secure: no fault (fls_state 0x0)')
  t.match(await field(page, 'selftest', 'Ran at'), new RegExp(`^${TIME}$`), 'when it ran')
  t.match(await field(page, 'selftest', 'Known-answer tests'), new RegExp(`^passed \\(ran at ${TIME}\\)$`))
  t.match(
    await field(page, 'selftest', 'Entropy source'),
    new RegExp(`^passed its health tests on fresh samples \\(last tested at ${TIME}\\)$`),
  )
  t.equal(
    await field(page, 'selftest', 'Key records'),
    `${answer.repo_stats.total} slots in use checked: every record intact; ${answer.repo_stats.deleted} deleted, ` +
      `${answer.repo_stats.fragmented} deleted below the highest slot in use (fragmented), ` +
      `${answer.repo_stats.freeslots} never written`,
    'the key store as the device counts it',
  )
  t.equal(answer.se_state, 0)
  t.equal(
    await field(page, 'selftest', 'Secure element'),
    'answers: it signed a probe with its log key and the signature checks',
  )
  t.match(
    await field(page, 'selftest', 'The self-test before'),
    new RegExp(`^${TIME} \\(.*\\), which left: secure: no fault \\(fls_state 0x0\\)$`),
    'the run before and the state it left',
  )
  t.same(await app.violations(), [], 'the result passes the accessibility check')

  // The temperature fault: the banner and the dashboard say it; the disks are refused.
  await diagOk(o.base, 'break_temp')
  await flsShown(o.base, FLS.TEMPERATURE)
  await app.go('Dashboard')
  const banner = page.locator('#fail-banner')
  t.equal(await banner.textContent(), 'The device is in the fail state: failed: the temperature is out of range.')
  t.equal(await field(page, 'status', 'State'), TEMPERATURE, 'fls_state in words')
  t.equal(await field(page, 'status', 'Temperature'), '125 °C', 'the broken sensor')
  await page.getByRole('button', { name: 'Unlock Disk 1 read-write', exact: true }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  const refused = await api(`${o.base}/api/storage/unlock/rw`, await login(o.base, 'storage:disk1:rw'))
  t.equal(refused.status, 409, 'the device refuses the disks in the fail state')
  t.equal(await alert.textContent(), `${refused.json.message} (HTTP 409)`, 'and the page says so in its words')
  t.same(await app.violations(), [], 'the refused dashboard passes the accessibility check')

  await app.go('Health')
  t.equal(await now.textContent(), `Now: ${TEMPERATURE}.`)
  const bits = async () => page.locator('#fail-bits tbody tr').allTextContents()
  t.same(
    await bits(),
    [
      '0x04the temperature is out of rangethe chip sensor, read every second (the range is set at start, ' +
        'by default -40 to 85 °C)itself, once the reading is 2 °C inside the range',
    ],
    'the bit set, what finds it and what clears it',
  )
  t.same(await app.violations(), [], 'the fail bits pass the accessibility check')
  await run()
  t.equal(await page.locator('#selftest-result p').first().textContent(), 'Failed.')
  t.equal(await field(page, 'selftest', 'Fail state after it'), TEMPERATURE)
  t.match(await field(page, 'selftest', 'Known-answer tests'), /^passed/, 'the KATs still pass')

  // The entropy source too: the self-test finds it, and the journal (its token minted before) names the test.
  await diagOk(o.base, 'break_trng')
  await flsShown(o.base, FLS.TEMPERATURE | FLS.ENTROPY)
  await run()
  const both = 'failed: the random number source failed its health test; the temperature is out of range'
  t.equal(await field(page, 'selftest', 'Fail state after it'), `${both} (fls_state 0x6)`)
  t.match(
    await field(page, 'selftest', 'Entropy source'),
    new RegExp(`^failed its health tests at ${TIME}: the repetition count test \\(one value repeated too often\\)$`),
    'the entropy source failed, and which test, in words',
  )
  t.match(await bits(), [/^0x02the random number source failed its health test/, /^0x04/], 'both bits explained')
  t.same(await app.violations(), [], 'the failed self-test passes the accessibility check')
  await page.setViewportSize({ width: 360, height: 740 })
  const width = await page.evaluate(
    () =>
      (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
        .scrollWidth,
  )
  t.ok(width <= 360, `no sideways scrolling at 360 px with the fail bits shown (${width})`)
  await page.setViewportSize({ width: 1280, height: 800 })
  await app.go('Dashboard')
  t.equal(await banner.textContent(), `The device is in the fail state: ${both}.`, 'the banner names both')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
