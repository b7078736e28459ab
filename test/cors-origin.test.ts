// The CORS origin is never `*` unless the owner sets it (issue 35, item 5): a fresh device admits no page but its
// own, hemctl init and the client library tell the device its own origin, and an explicit `*` is accepted and told
// in status, in the ops log and in hemd's banner.
import { join } from 'node:path'
import { pino } from 'pino'
import t from 'tap'
import { bootDevice } from './helpers/device.js'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { runHemd } from './helpers/hemd-process.js'
import { call } from './helpers/http.js'
import { MASTER_PASS, ownerClient, personalise, USER_PASS } from './helpers/owner.js'
import { until } from './helpers/until.js'

/** Origins of pages that are not the device's: none may call it unless the owner allows every origin. */
const HOSTILE = [
  'https://evil.example',
  'http://evil.example:8080',
  'null',
  'https://hem.local.evil.test',
  'https://127.0.0.1',
  'http://localhost:1',
  'http://127.0.0.2:8080',
  'http://[::1]:1',
  'https://attacker.test:8443',
]

const ANY_ORIGIN_LOG = 'CORS origin *: every web page the owner visits may call the routes that need no token'

/** Which of `origins` a device at `base` answers with its CORS headers (echoed), and which it refuses with 412. */
async function probe(base: string, origins: readonly string[]): Promise<{ echoed: string[]; refused: string[] }> {
  const echoed: string[] = []
  const refused: string[] = []
  for (const origin of origins) {
    const answer = await call(`${base}/api/system/status`, { headers: { Origin: origin } })
    if (answer.headers['access-control-allow-origin'] === origin) echoed.push(origin)
    if (answer.status === 412) refused.push(origin)
  }
  return { echoed, refused }
}

/** The warnings a device logs, one parsed line each. */
function capturedLog() {
  const lines: { msg: string; origin?: string }[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  return { logger, warned: () => lines.filter((line) => line.msg === ANY_ORIGIN_LOG).length }
}

const E_CFG = {
  user: 'Ada',
  email: 'ada@example.com',
  hostname: 'hem.example',
  trusted_ts: true,
  trusted_backend: false,
  allow_keysearch: false,
}

t.test('a fresh device admits no page but its own; hemctl init gives it its own origin', async (t) => {
  const dir = t.testdir()
  const device = await bootDevice(t, { variant: 'E', dataDir: join(dir, 'device') })
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    t.same(await probe(base, HOSTILE), { echoed: [], refused: HOSTILE }, `fresh, ${base}: every hostile origin 412`)
    t.same(await probe(base, [base]), { echoed: [base], refused: [] }, 'its own origin is served')
  }
  const run = hemctlInProcess(['--url', device.httpsUrl!, '--insecure'], join(dir, 'config'))
  const init = await run(['init', '--user', 'Ada', '--email', 'ada@example.com'], {
    env: { HEM_MASTER_PASSPHRASE: MASTER_PASS },
  })
  t.equal(init.code, 0, init.stderr)
  const config = await run(['config', 'get', '--json'])
  t.equal(JSON.parse(config.stdout).origin, device.httpsUrl, "without --origin: the origin of the device's URL")
  for (const base of [device.httpUrl!, device.httpsUrl!]) {
    t.same(await probe(base, HOSTILE), { echoed: [], refused: HOSTILE }, `personalised, ${base}: every hostile 412`)
    t.same(await probe(base, [base]), { echoed: [base], refused: [] }, 'its own origin, over either listener')
  }
  t.notOk('origin' in (await call(`${device.httpUrl}/api/system/status`)).json, 'status: nothing to warn of')
})

t.test('the client library gives its own origin; `*` only when set, and then told', async (t) => {
  const { logger, warned } = capturedLog()
  const device = await bootDevice(t, { variant: 'E', dataDir: t.testdir(), logger })
  const client = ownerClient(device.httpsUrl!)
  await client.personalise({ user: USER_PASS, master: MASTER_PASS }, E_CFG)
  t.equal((await client.config()).origin, device.httpsUrl, 'cfg without origin: the URL the client talks to')
  t.same(await probe(device.httpUrl!, HOSTILE), { echoed: [], refused: HOSTILE })
  t.equal(warned(), 0, 'no warning')

  await client.setConfig({ origin: '*' })
  t.same(await probe(device.httpUrl!, HOSTILE), { echoed: HOSTILE, refused: [] }, '`*`: every page is echoed')
  t.equal((await client.status()).origin, '*', 'status says so')
  await until('the ops log warns', async () => warned() === 1)
  const status = await hemctlInProcess(['--url', device.httpsUrl!, '--insecure'], t.testdirName)(['status'])
  t.match(status.stdout, /^origin: \* \(WARNING: every web page its owner visits may call the device routes/m)

  await client.setConfig({ origin: 'https://app.example' })
  t.notOk('origin' in (await client.status()), 'another origin: nothing in status')
  t.same(await probe(device.httpUrl!, ['https://app.example']), { echoed: ['https://app.example'], refused: [] })
  await client.setConfig({ origin: '*' })
  await until('warned again when set again', async () => warned() === 2)
})

t.test("hemd's banner and ops log warn of a device that runs with `*`", async (t) => {
  const data = join(t.testdir(), 'data')
  const first = await runHemd(t, ['--variant', 'E', '--data', data])
  t.notMatch(first.stdout(), /CORS/, 'a fresh device: no warning')
  const init = await personalise(first.httpUrl, 'E', { origin: '*' })
  t.equal(init.status, 200, 'an explicit `*` is accepted at personalisation')
  await until('the ops log warns as it is set', async () => first.stderr().includes(ANY_ORIGIN_LOG))
  t.equal(await first.interrupt(), 0)

  const again = await runHemd(t, ['--variant', 'E', '--data', data])
  t.match(again.stdout(), /^ {2}WARNING: CORS origin \*: every web page the owner visits may call the routes/m)
  t.match(again.stderr(), /"level":40[^\n]*"origin":"\*"[^\n]*CORS origin \*/, 'the ops log warns at boot')
  t.equal((await call(`${again.httpUrl}/api/system/status`)).json.origin, '*')
})
