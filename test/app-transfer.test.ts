// What the app moves over the network (issue 39, item 5), in Chromium over HTTPS: the first load, before login,
// within 70 KB transferred, every file br; a reload moves only 304s; each screen's chunk is fetched once, the
// first time it shows; nothing the CSP refuses. The page's modules (sent with an Origin) load wherever the app is
// reached: at the device's hostname, at an address it listens on, and on a fresh device with no hostname, by name.
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { CDPSession, Page } from 'playwright-core'
import { APP_HOST, installApp, openApp } from './helpers/app.js'
import { noChromium, openPage } from './helpers/browser.js'
import { bootDevice } from './helpers/device.js'
import { FIRST_LOAD_BUDGET_BYTES } from '../deploy/webroot-budget.js'

interface Fetched {
  path: string
  status: number
  encoding: string | undefined
  /** Bytes on the wire, headers included (CDP's encodedDataLength). */
  transferred: number
  /** The request carried an Origin header. */
  origin: boolean
}

/** Every request of the page as the browser's network layer sees it, from now on. */
async function networkLog(page: Page): Promise<{ fetched: Fetched[]; settled(): Promise<void> }> {
  const cdp: CDPSession = await page.context().newCDPSession(page)
  await cdp.send('Network.enable')
  // The browser's cache is on (as an owner's is): a reload must be able to revalidate.
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: false })
  const pending = new Map<string, Partial<Fetched>>()
  const fetched: Fetched[] = []
  let idle: (() => void) | undefined
  cdp.on('Network.requestWillBeSent', ({ requestId, request }) => {
    const headers = Object.keys(request.headers).map((name) => name.toLowerCase())
    pending.set(requestId, { path: new URL(request.url).pathname, origin: headers.includes('origin') })
  })
  cdp.on('Network.responseReceived', ({ requestId, response }) => {
    const entry = pending.get(requestId)
    if (!entry) return
    const header = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-encoding')
    Object.assign(entry, { status: response.status, encoding: header?.[1] })
  })
  // The status on the wire: Chromium reports a page revalidated by a 304 as the 200 it had kept.
  const wire = new Map<string, number>()
  cdp.on('Network.responseReceivedExtraInfo', ({ requestId, statusCode }) => void wire.set(requestId, statusCode))
  const finish = (requestId: string, transferred: number) => {
    const entry = pending.get(requestId)
    if (!entry) return
    pending.delete(requestId)
    fetched.push({ ...(entry as Fetched), status: wire.get(requestId) ?? entry.status!, transferred })
    if (pending.size === 0) idle?.()
  }
  cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => finish(requestId, encodedDataLength))
  cdp.on('Network.loadingFailed', ({ requestId }) => finish(requestId, 0))
  return {
    fetched,
    settled: () => (pending.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve))),
  }
}

const isStatic = (path: string) => !path.startsWith('/api/') && path !== '/app-config.json'
const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`

/** Over plain HTTP (a page of a certificate error is never cached), the page itself revalidates too. */
async function plainHttpReload(t: Test, url: string, count: number): Promise<void> {
  const { page } = await openPage(t)
  const log = await networkLog(page)
  await page.goto(url)
  await page.getByLabel('Passphrase').waitFor()
  await log.settled()
  log.fetched.splice(0)
  await page.reload()
  await page.getByLabel('Passphrase').waitFor()
  await log.settled()
  const reloaded = log.fetched.filter((f) => isStatic(f.path))
  t.equal(reloaded.length, count, 'over HTTP, the reload asks for every file again')
  t.same(
    reloaded.filter((f) => f.status !== 304),
    [],
    'and each, the page too, is answered 304',
  )
}

t.test('first load ≤ 70 KB, a reload 304s, each screen fetched once', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  // A page of its own, its cache empty: openApp's has loaded the app already.
  const { page, problems } = await openPage(t)
  const log = await networkLog(page)
  const status = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/system/status')
  await page.goto(app.url)
  await page.getByLabel('Passphrase').waitFor()
  await status
  await log.settled()
  const first = log.fetched.splice(0)
  const total = first.reduce((sum, f) => sum + f.transferred, 0)
  t.ok(total <= FIRST_LOAD_BUDGET_BYTES, `the first load moved ${kb(total)} in ${first.length} requests`)
  const files = first.filter((f) => isStatic(f.path))
  t.ok(files.some((f) => f.path === '/app.js') && files.some((f) => /^\/chunks\/chunk-/.test(f.path)), 'app.js, chunks')
  t.same(
    files.filter((f) => f.status !== 200 || f.encoding !== 'br'),
    [],
    'every file 200, br',
  )
  t.notOk(
    files.some((f) => /-view-/.test(f.path)),
    'no screen before login',
  )
  t.ok(
    files.filter((f) => f.path.endsWith('.js')).every((f) => f.origin),
    'modules are fetched with an Origin (which the gateway serves whatever)',
  )
  t.comment(`first load: ${kb(total)}; ${first.map((f) => `${f.path} ${f.transferred}`).join(', ')}`)

  await page.reload()
  await page.getByLabel('Passphrase').waitFor()
  await log.settled()
  const reload = log.fetched.splice(0)
  const reloaded = reload.filter((f) => isStatic(f.path))
  t.same(reloaded.map((f) => f.path).sort(), files.map((f) => f.path).sort(), 'the reload asks for every file again')
  // Chromium keeps no page whose certificate it was told to ignore (the test device's is self-signed) in its cache:
  // the page itself comes again, 1 KB; over plain HTTP below, it is a 304 too.
  t.same(
    reloaded.filter((f) => f.status !== 304).map((f) => f.path),
    ['/'],
    `every other file answered 304 (${reloaded.length - 1} of them)`,
  )
  const moved = reload.reduce((sum, f) => sum + f.transferred, 0)
  t.comment(`reload: ${kb(moved)} in ${reload.length} requests, ${reloaded.length - 1} of them 304s`)
  // From loopback: over plain HTTP the app offers its login there only (webroot/plain-http.ts).
  await plainHttpReload(t, `${app.o.base}/`, files.length)

  // Logged in, each screen's chunk is fetched the first time it shows, and never again.
  await page.getByLabel('Passphrase').fill('correct horse battery staple')
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.locator('#screen-title', { hasText: 'Dashboard' }).waitFor()
  const titles = ['Keys', 'Audit log', 'Settings', 'Upgrades', 'Health', 'Dashboard', 'Keys', 'Settings']
  for (const title of titles) {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: title, exact: true }).click()
    await page.locator('#screen-title', { hasText: title }).waitFor()
    await page.locator('#view:not([aria-busy])').waitFor()
  }
  await log.settled()
  const screens = log.fetched.filter((f) => /^\/chunks\/[a-z]+-view-/.test(f.path)).map((f) => f.path)
  t.equal(screens.length, 6, `six screens, six chunks: ${screens.join(', ')}`)
  t.equal(new Set(screens).size, 6, 'each once')
  t.ok(
    log.fetched.filter((f) => isStatic(f.path)).every((f) => f.status === 200 && f.encoding === 'br'),
    'br',
  )
  t.same(problems, [], 'no script error and no CSP violation')
})

t.test(
  "the app's modules load at the device's address, and on a fresh device by any name",
  { skip: noChromium },
  async (t) => {
    const app = await openApp(t)
    const { page, problems } = await openPage(t)
    // At an address it listens on: the device's own origin too.
    const atAddress = app.o.https + '/'
    await page.goto(atAddress)
    await page.getByLabel('Passphrase').fill('correct horse battery staple')
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.locator('#screen-title', { hasText: 'Dashboard' }).waitFor()
    await page.locator('#view:not([aria-busy])').waitFor()
    t.match(await page.locator('#who').textContent(), /^Logged in as Ada/, 'at the address: logged in, a screen shown')

    // A fresh device has no hostname: reached by a name (one the owner's network gives it), its origin is no
    // device origin the gateway knows, and the page's modules come all the same.
    const root = t.testdir({ data: {}, scratch: {} })
    const fresh = await bootDevice(t, { variant: 'P', dataDir: join(root, 'data') })
    await installApp(join(root, 'data'), join(root, 'scratch'))
    for (const url of [`${fresh.httpsUrl!.replace('127.0.0.1', APP_HOST)}/`, `${fresh.httpsUrl!}/`]) {
      const { page: freshPage, problems: freshProblems } = await openPage(t)
      await freshPage.goto(url)
      await freshPage.locator('#device-line', { hasText: 'This device has no owner yet' }).waitFor()
      t.pass(`${url}: the app ran, and read the device`)
      t.same(freshProblems, [], `${url}: nothing refused`)
    }
    t.same(problems, [], 'no script error and no CSP violation')
  },
)
