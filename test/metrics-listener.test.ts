// hemd --metrics HOST:PORT (docs/metrics.md): GET /metrics without a token, everything else 404; off by default and
// validated; with --split the other service processes' series reach it over the bus.
import t from 'tap'
import { parseHemdArgs, type HemdArgs } from '../cli/hemd/hemd-cli.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { valueOf } from './helpers/metrics.js'
import { until } from './helpers/until.js'

const LOOPBACK = { host: '127.0.0.1', port: 0 }

t.test('the flag: off by default, HOST:PORT with a port 1-65535', async (t) => {
  t.notOk('metrics' in (parseHemdArgs([]) as HemdArgs), 'no listener unless asked for')
  t.same((parseHemdArgs(['--metrics', '0.0.0.0:9464']) as HemdArgs).metrics, { host: '0.0.0.0', port: 9464 })
  t.same((parseHemdArgs(['--metrics', '[::1]:9464']) as HemdArgs).metrics, { host: '::1', port: 9464 })
  for (const bad of ['127.0.0.1:0', '127.0.0.1:65536', '9464', 'localhost', ''])
    t.throws(() => parseHemdArgs(['--metrics', bad]), /--metrics must be HOST:PORT/, `refused: '${bad}'`)
})

t.test('the listener serves GET /metrics without a token, and nothing else', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', metrics: LOOPBACK })
  const base = device.metricsUrl!
  t.match(base, /^http:\/\/127\.0\.0\.1:\d+$/)
  const answer = await call(`${base}/metrics`)
  t.equal(answer.status, 200)
  t.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  t.ok(valueOf(answer.text, 'hem_key_slots_free')! > 0, 'the device state is there')
  for (const [method, path] of [
    ['GET', '/'],
    ['GET', '/api/system/status'],
    ['GET', '/metrics/x'],
    ['POST', '/metrics'],
  ] as const)
    t.equal((await call(`${base}${path}`, { method })).status, 404, `${method} ${path}: 404`)
  // The device's own listeners still want a token for it.
  t.equal((await call(`${device.httpUrl}/metrics`)).status, 401)
  const plain = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  t.equal(plain.metricsUrl, undefined, 'off by default')
})

t.test('--split: every service process publishes its series to the listener', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', split: true, metrics: LOOPBACK })
  const processes = ['eventstore', 'system', 'auth', 'keystore', 'logger', 'storage', 'upgrade', 'gateway']
  let text = ''
  // A process's first snapshot may go out before the gateway listens: its next comes within METRICS_PERIOD_MS.
  await until('every service process is seen', async () => {
    text = (await call(`${device.metricsUrl}/metrics`)).text
    return processes.every((process) => valueOf(text, 'hem_process_resident_memory_bytes', { process })! > 0)
  })
  t.ok(valueOf(text, 'hem_journal_records_appended_total', { process: 'eventstore' })! > 0, 'the eventstore journals')
  t.equal(valueOf(text, 'hem_journal_records_appended_total', { process: 'gateway' }), 0, 'the gateway does not')
  t.ok(valueOf(text, 'hem_bus_envelopes_received_total', { process: 'auth' })! > 0, 'auth took commands')
  t.ok(valueOf(text, 'hem_key_slots_free')! > 0)
})
