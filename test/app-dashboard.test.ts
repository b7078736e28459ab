// The dashboard in Chromium against a real device: the state in words, the temperature chart
// growing with each reading, uptime and clock, version, the disks locked and unlocked, the shell's
// one status read every 3 s, and an E device, which has no disks. (A reboot: app-reboot-relogin.test.ts.)
import t from 'tap'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { buildWebroot } from '../deploy/build-webroot.js'
import { APP_CONFIG_PATH, appConfigReply, appFilePath, STATIC_HEADERS, staticFile } from '../gateway/static-site.js'
import { APP_HOST, openApp } from './helpers/app.js'
import { accessibilityViolations, noChromium, openPage } from './helpers/browser.js'
import { api } from './helpers/keys.js'
import { login, owned, USER_PASS } from './helpers/owner.js'
import { until } from './helpers/until.js'

/** A `<dd>` of the list `#list`, by its `<dt>`. */
function field(page: Page, list: string, name: string): Promise<string | null> {
  return page
    .locator(`#${list} dt`, { hasText: new RegExp(`^${name.replace(/[()]/g, '\\$&')}$`) })
    .locator('xpath=following-sibling::dd[1]')
    .textContent()
}

const caption = (page: Page) => page.locator('figcaption')

t.test('the dashboard of a P device', { skip: noChromium }, async (t) => {
  const app = await openApp(t)
  const { page, o } = app
  await app.logIn()
  t.equal(await page.locator('#screen-title').textContent(), 'Dashboard')

  const status = (await api(`${o.base}/api/system/status`, undefined)).json
  const version = (await api(`${o.base}/api/system/version`, o.token)).json
  t.equal(await field(page, 'status', 'State'), 'secure: no fault (fls_state 0x0)', 'fls_state in words')
  t.ok(await page.locator('#fail-banner').isHidden(), 'no fail-state banner')
  t.match(
    await field(page, 'status', 'Uptime'),
    /^(less than a minute|\d+ minutes?) \(since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/,
    'uptime in words, and since when',
  )
  t.match(await field(page, 'status', 'Device clock'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/, 'the device clock')
  t.equal(
    await field(page, 'status', 'Clock offset'),
    "in step with this browser's clock (within 2 seconds)",
    'against the browser clock on the same host',
  )
  t.equal(await field(page, 'status', 'Temperature'), `${status.temp} °C`, 'the temperature')
  t.equal(await field(page, 'status', 'Disk formatting'), 'done')
  t.equal(await page.locator('#status dt', { hasText: 'Allowed web origin' }).count(), 0, 'an origin of its own')
  t.equal(await field(page, 'version', 'Firmware'), version.fwv, 'the firmware version')
  t.equal(await field(page, 'version', 'Hardware'), version.hwv, 'the hardware version')
  t.equal(await field(page, 'version', 'microSD card id (CID)'), version.sd_cid, 'with what a token adds')
  const stats = (await api(`${o.base}/api/system/status`, o.token)).json.repo_stats
  t.equal(await field(page, 'key-store', 'Slots in use'), String(stats.total), 'repo_stats, which a token adds')
  t.equal(await field(page, 'key-store', 'Free slots'), String(stats.freeespace))

  // The chart: one reading at first, then one more at each poll.
  t.match(await caption(page).textContent(), /over the last 1 reading \(0 seconds\)\.$/, 'one reading')
  t.equal(await page.locator('svg.temp-chart circle').count(), 1, 'drawn as a point')
  t.equal(await page.getByRole('img', { name: /^Temperature now / }).count(), 1, 'named by its text alternative')
  await caption(page).filter({ hasText: 'over the last 2 readings' }).waitFor()
  const points = async () => ((await page.locator('svg.temp-chart polyline').getAttribute('points')) ?? '').split(' ')
  t.equal((await points()).length, 2, 'two readings: a line')
  await caption(page).filter({ hasText: 'over the last 3 readings' }).waitFor()
  t.equal((await points()).length, 3, 'three readings')
  t.match(
    await caption(page).textContent(),
    new RegExp(`^Temperature now ${status.temp} °C; lowest \\d+ °C, highest \\d+ °C over the last 3 readings`),
    'now, lowest and highest in words',
  )
  t.same(await app.violations(), [], 'the dashboard passes the accessibility check')

  const rows = await page.locator('#disks tr').allTextContents()
  t.match(
    rows,
    [/^Disk 0131072 sectors \(64 MiB\)unlocked, read-only/, /^Disk 1\d+ sectors \(\d+ MiB\)locked/],
    'both disks, as status.storage has them',
  )
  t.match(status.storage, ['131072:ro', /^\d+:-$/], 'which says so')
  const notice = (text: string) => page.getByRole('status').filter({ hasText: text }).waitFor()
  const disk1 = async () => ((await api(`${o.base}/api/system/status`, undefined)).json.storage as string[])[1]
  await page.getByRole('button', { name: 'Unlock Disk 1 read-write', exact: true }).click()
  await notice('Disk 1 is unlocked, read-write.')
  t.match(await disk1(), /:rw$/, 'the device unlocked Disk 1 read-write')
  t.match(await page.locator('#disks tr').nth(1).textContent(), /unlocked, read-write/, 'and the page shows it')
  t.same(await app.violations(), [], 'an unlocked disk passes the accessibility check')
  await page.getByRole('button', { name: 'Lock Disk 1', exact: true }).click()
  await notice('Disk 1 is locked.')
  t.match(await disk1(), /:-$/, 'and locked it again')
  t.match(await page.locator('#disks tr').nth(1).textContent(), /Disk 1.*\)locked/, 'and the page shows it')

  // One read of the status every 3 s, the shell's watch: the dashboard follows it, with no poll of its own.
  const reads: number[] = []
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/api/system/status') reads.push(Date.now())
  })
  await until('four status reads', async () => reads.length >= 4)
  const gaps = reads.slice(1, 4).map((at, i) => at - reads[i]!)
  t.ok(
    gaps.every((gap) => gap > 2000),
    `one status read every 3 s, not one per poller (${gaps.join(', ')} ms)`,
  )
  t.same(app.problems, [], 'no script error and no CSP violation')
})

t.test('the dashboard of an E device has no disks', { skip: noChromium }, async (t) => {
  // E serves no app (the contract): the page gets the app's files (and its cloud, none) from the test, its API from
  // the device.
  const root = t.testdir({ data: {}, webroot: {} })
  const webroot = join(root, 'webroot')
  await buildWebroot(webroot)
  // Its owner allows every origin: the dashboard says what that exposes.
  const o = await owned(t, { variant: 'E', dataDir: join(root, 'data'), cfg: { origin: '*' } })
  const { page, problems } = await openPage(t)
  await page.route(
    (url) => !url.pathname.startsWith('/api/'),
    async (route) => {
      const path = new URL(route.request().url()).pathname
      // What the gateway answers beside the files: this device names no cloud.
      if (path === APP_CONFIG_PATH) return route.fulfill({ json: appConfigReply().body })
      const file = await staticFile(webroot, appFilePath(path))
      await route.fulfill({
        status: 200,
        body: file.body as Buffer,
        contentType: file.contentType!,
        headers: Object.fromEntries(STATIC_HEADERS),
      })
    },
  )
  await page.goto(`${o.https.replace('127.0.0.1', APP_HOST)}/`)
  await page.getByLabel('Passphrase').fill(USER_PASS)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.locator('#screen-title', { hasText: 'Dashboard' }).waitFor()
  await page.locator('#view:not([aria-busy])').waitFor()
  const status = (await api(`${o.base}/api/system/status`, undefined)).json
  t.notOk('storage' in status, 'E has no storage field')
  t.equal(await field(page, 'status', 'State'), 'secure: no fault (fls_state 0x0)')
  t.equal(await page.getByRole('heading', { name: 'Disks' }).count(), 0, 'no disks section')
  t.equal(await page.getByRole('button', { name: /Disk/ }).count(), 0, 'nor disk buttons')
  t.equal(await page.locator('#version dt', { hasText: 'microSD' }).count(), 0, 'nor microSD registers')
  t.equal(await field(page, 'version', 'Hardware'), (await api(`${o.base}/api/system/version`, o.token)).json.hwv)
  t.equal(
    await field(page, 'status', 'Allowed web origin'),
    'any (*): every page you visit may call the routes that need no login',
  )
  t.same(await accessibilityViolations(page), [], 'passes the accessibility check')
  t.same(problems, [], 'no script error and no CSP violation')
})
