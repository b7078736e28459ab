// The Grafana dashboard's screenshot for docs/metrics.md, without Grafana (not in Debian, not on npm): a real device
// with its --metrics listener, Debian's real prometheus scraping it every second, a couple of minutes of traffic
// (status, encrypts, key creation, logins and failed ones, refused requests) while its journal mirror's link to a
// fleet backend is cut for a while, then every panel of deploy/grafana/hemd-dashboard.json asked of Prometheus's
// query_range and drawn from its answers alone (test/helpers/dashboard-page.ts) in headless Chromium. Prints the
// panels that had no data.
// `npm run screenshots:dashboard [-- OUT.png [SECONDS]]`, default docs/screenshots/metrics-dashboard.png, 120 s.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { openPage } from '../helpers/browser.js'
import { type Dashboard, type DashboardTarget, dashboardPage, panelsWithoutData } from '../helpers/dashboard-page.js'
import { freePort, repoRoot } from '../helpers/device.js'
import { call } from '../helpers/http.js'
import { DOMAIN, startBackend } from '../helpers/jetstream-backend.js'
import { api, b64, createKey, Tokens } from '../helpers/keys.js'
import { loginAnswer, owned, type Owned } from '../helpers/owner.js'
import { type RangeSeries, startPrometheus } from '../helpers/prometheus.js'
import { scriptTest } from '../helpers/script-test.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'
import { until } from '../helpers/until.js'

const SCRAPE_SECONDS = 1
const WIDTH = 1600

/** One second's requests: the status and encrypt load swings, a key now and then, logins good and bad, refusals. */
async function trafficSecond(o: Owned, tokens: Tokens, kid: string, second: number): Promise<void> {
  const work: Promise<unknown>[] = []
  const statuses = 4 + Math.round(3 * Math.sin(second / 8))
  for (let i = 0; i < statuses; i += 1) work.push(call(`${o.base}/api/system/status`))
  const encrypts = second % 40 < 20 ? 6 : 2
  const use = await tokens.get(`keymgmt:use:${kid}`)
  for (let i = 0; i < encrypts; i += 1)
    work.push(api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('x')) }))
  if (second % 15 === 0)
    work.push(createKey(o.https, await tokens.get('keymgmt:gen'), { label: `demo-${second}`, type: 'ED25519' }))
  if (second % 20 === 5) work.push(loginAnswer(o.base, 'system:status', 'not the passphrase'))
  if (second % 30 === 10) work.push(loginAnswer(o.base, 'system:status'))
  // Refusals: no token (401), and another key's scope (403).
  if (second % 10 === 3) work.push(api(`${o.https}/api/keymgmt/get/${kid}`, undefined))
  if (second % 12 === 7) work.push(api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid: 'x' }))
  await Promise.all(work)
}

/** The fleet's backend (JetStream in a nats-server) behind a proxy the run cuts for a while: the mirror's panels. */
async function fleetBackend(t: Test, dir: string) {
  const leafPort = await freePort()
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: leafPort })
  t.teardown(() => proxy.close())
  const backend = await startBackend(dir, { leafPort, advertise: proxy.port })
  t.teardown(() => backend.stop())
  return { proxy, backend: { url: `nats://127.0.0.1:${proxy.port}`, domain: DOMAIN } }
}

/** Grafana's interval variables, should a query use them, as the concrete values of this range. */
function concrete(expr: string, step: number, range: number): string {
  return expr
    .replaceAll('$__rate_interval', `${Math.max(4 * SCRAPE_SECONDS, step + SCRAPE_SECONDS)}s`)
    .replaceAll('$__interval', `${step}s`)
    .replaceAll('$__range', `${range}s`)
}

const timeOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(11, 19)

export async function dashboardScreenshot(path: string, seconds: number): Promise<{ noData: string[] }> {
  const scratch = await mkdtemp(join(tmpdir(), 'hem-dashboard-'))
  const teardowns: (() => unknown)[] = []
  const t = scriptTest(scratch, teardowns)
  try {
    const dashboard = JSON.parse(await readFile(join(repoRoot, 'deploy/grafana/hemd-dashboard.json'), 'utf8'))
    const metrics = { host: '127.0.0.1', port: 0 }
    const { proxy, backend } = await fleetBackend(t, join(scratch, 'backend'))
    const cfg = { trusted_backend: true }
    const o = await owned(t, { dataDir: join(scratch, 'device'), cfg, boot: { metrics, backend } })
    await mkdir(join(scratch, 'prometheus'))
    const prometheus = await startPrometheus(t, join(scratch, 'prometheus'), [new URL(o.device.metricsUrl!).host])
    await until('the first scrape', async () => (await prometheus.query('up{job="hemd"}')).length === 1)
    const start = Math.floor(Date.now() / 1000)
    const tokens = new Tokens(o.base)
    const kid = await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'payments', type: 'AES256' })
    const cut = [Math.round(seconds * 0.45), Math.round(seconds * 0.65)]
    for (let second = 0; second < seconds; second += 1) {
      const next = start + second + 1
      if (second === cut[0]) proxy.cut()
      if (second === cut[1]) proxy.restore()
      await trafficSecond(o, tokens, kid, second)
      await sleep(Math.max(0, next * 1000 - Date.now()))
    }
    const end = Math.ceil(Date.now() / 1000) + 2 * SCRAPE_SECONDS
    await until('a scrape after the traffic', async () => {
      const [last] = await prometheus.query('timestamp(up{job="hemd"})')
      return last !== undefined && Number(last.value[1]) >= end
    })
    const step = Math.max(1, Math.round((end - start) / 240))
    const answers = new Map<DashboardTarget, RangeSeries[]>()
    for (const panel of (dashboard as Dashboard).panels)
      for (const target of panel.targets ?? [])
        answers.set(target, await prometheus.queryRange(concrete(target.expr, step, end - start), { start, end, step }))
    const { stdout } = await promisify(execFile)('prometheus', ['--version'])
    const version = /version (\S+)/.exec(stdout)?.[1] ?? 'unknown'
    const caption =
      `Drawn by hemd's test/tools/dashboard-screenshot.ts from deploy/grafana/hemd-dashboard.json, not by Grafana: ` +
      `every point is an answer of a real Prometheus (${version}, Debian's) to the panel's query_range, scraping a ` +
      `hemd device every ${SCRAPE_SECONDS} s under ${seconds} s of generated traffic, its journal mirrored to a ` +
      `JetStream backend whose link the tool cut from ${timeOf(start + cut[0]!)} to ${timeOf(start + cut[1]!)}.`
    const { page } = await openPage(t)
    await page.setViewportSize({ width: WIDTH, height: 900 })
    await page.setContent(dashboardPage(dashboard, answers, { window: { start, end }, width: WIDTH, caption }))
    await page.screenshot({ path, fullPage: true })
    return { noData: panelsWithoutData(dashboard, answers).map((panel) => panel.title) }
  } finally {
    for (const fn of teardowns.reverse()) await fn()
    await rm(scratch, { recursive: true, force: true })
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const path = resolve(process.argv[2] ?? join(repoRoot, 'docs', 'screenshots', 'metrics-dashboard.png'))
  const began = Date.now()
  const seconds = Number(process.argv[3] ?? 120)
  if (!Number.isInteger(seconds) || seconds < 10) throw new RangeError(`SECONDS: a whole number ≥ 10, not ${seconds}`)
  const { noData } = await dashboardScreenshot(path, seconds)
  const took = ((Date.now() - began) / 1000).toFixed(0)
  console.log(`wrote ${path} (${(await stat(path)).size} bytes) in ${took} s`)
  console.log(noData.length > 0 ? `panels with no data: ${noData.join('; ')}` : 'every panel had data')
}
