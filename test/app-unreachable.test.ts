// The device unreachable, shown honestly: its network cut (a proxy in front of it; the device keeps running), the
// page says since when it has not answered, greys what it shows with its age and claims no current state; the network
// back, it reconnects on its own, without a reload.
import t from 'tap'
import type { Page } from 'playwright-core'
import { APP_HOST, openApp } from './helpers/app.js'
import { noChromium } from './helpers/browser.js'
import { startTcpProxy } from './helpers/tcp-proxy.js'

function state(page: Page): Promise<string | null> {
  return page
    .locator('#status dt', { hasText: /^State$/ })
    .locator('xpath=following-sibling::dd[1]')
    .textContent()
}

const readings = async (page: Page) =>
  Number(/over the last (\d+) reading/.exec((await page.locator('figcaption').textContent()) ?? '')?.[1])

t.test('the device unreachable, then back', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(o.https).port) })
  t.teardown(() => proxy.close())
  await page.goto(`https://${APP_HOST}:${proxy.port}/`)
  await app.logIn()
  t.equal(await state(page), 'secure: no fault (fls_state 0x0)', 'the state, live')
  // A mark of this page: a reload would lose it.
  await page.evaluate(() => ((globalThis as unknown as { kept: boolean }).kept = true))

  proxy.cut()
  const banner = page.locator('#unreachable')
  // It says how long ago, and counts on.
  await banner.filter({ hasText: /\((?:[2-9]|\d\d+) s ago\)/ }).waitFor()
  t.match(
    await banner.textContent(),
    /^The device has not answered since \d\d:\d\d:\d\d UTC \(\d+ s ago\)\. Retrying…$/,
    'a banner: since when, how long ago, and that it retries',
  )
  const shown = await state(page)
  t.notMatch(shown, /^secure: no fault/, 'no "secure: no fault" shown as current')
  t.match(shown, /^not known: the device does not answer \(as of \d+ s ago: secure: no fault \(fls_state 0x0\)\)$/)
  t.match(await page.locator('#status').getAttribute('class'), /\bstale\b/, 'the values marked stale')
  t.match(await page.locator('#live').textContent(), /^No answer since .*: the values above are as of \d+ s ago\./)
  // The muted colour of the palette: a hint's (style.css), against a value's now. Both read in one turn of the
  // page: the watch's ticks while silent redraw the rows, and a row detached between two calls has no colour.
  type Page = {
    document: { querySelector(selector: string): unknown }
    getComputedStyle(element: unknown): { color: string }
  }
  const grey = await page.evaluate(() => {
    const window = globalThis as unknown as Page
    const color = (selector: string) => window.getComputedStyle(window.document.querySelector(selector)).color
    return { value: color('#status dd'), muted: color('#live') }
  })
  t.equal(grey.value, grey.muted, 'and greyed')
  t.same(await app.violations(), [], 'unreachable: passes the accessibility check')
  await page.emulateMedia({ colorScheme: 'dark' })
  t.same(await app.violations(), [], 'and in the dark palette')
  await page.emulateMedia({ colorScheme: 'light' })

  const before = await readings(page)
  proxy.restore()
  await banner.waitFor({ state: 'hidden', timeout: 30_000 })
  await page.locator('#status:not(.stale)').waitFor()
  t.equal(await state(page), 'secure: no fault (fls_state 0x0)', 'the state live again')
  await page.locator('figcaption', { hasText: `over the last ${before + 1} readings` }).waitFor()
  t.pass('the chart takes readings again')
  t.equal(await page.evaluate(() => (globalThis as unknown as { kept?: boolean }).kept), true, 'without a reload')
  t.ok(await page.getByRole('navigation').isVisible(), 'still logged in')
  t.ok(await page.getByRole('alert').isHidden(), 'no error')
  t.same(app.problems, [], 'no script error and no CSP violation')
})
