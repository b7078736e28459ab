// The periodic self-test: every selfTestIntervalMs, journaled with source `periodic`, feeding the next answer's
// last_*; the DIAG build's diag_disable_selftest stops it until the next boot.
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import type { Device } from '../runtime/types.js'
import { manualClock } from './helpers/clock.js'
import { bootDevice } from './helpers/device.js'
import { gatewayBus, systemOp } from './helpers/gateway-bus.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { until } from './helpers/until.js'

/** Not the default: the boot takes the interval it is given. */
const INTERVAL_MS = 43_210

async function periodicRuns(device: Device) {
  return (await readJournal(device.dataDir)).records.filter(
    (r) => r.type === LogType.SELFTEST_PASSED && r.decoded?.source === 'periodic',
  )
}

t.test('every selfTestIntervalMs a whole self-test; disable_selftest stops it until the next boot', async (t) => {
  // The device's clock moves on only when the test says: no wall clock decides when the self-test runs.
  const clock = manualClock()
  const device = await bootDevice(t, {
    dataDir: t.testdir(),
    variant: 'E',
    diag: true,
    clock,
    selfTestIntervalMs: INTERVAL_MS,
  })
  t.ok(clock.armed().includes(INTERVAL_MS), 'the boot armed it, with the interval given')
  clock.advance(INTERVAL_MS)
  const firedAt = Math.floor(clock.now() / 1000)
  await until('a periodic self-test journaled', async () => (await periodicRuns(device)).length === 1)
  t.match((await periodicRuns(device))[0], { result: LogResult.OK, subject: '', decoded: { source: 'periodic' } })
  t.notOk('rid' in ((await periodicRuns(device))[0]!.decoded ?? {}), 'no request behind it')

  const asked = (await call(`${device.httpUrl}/api/system/selftest`)).json
  t.ok(
    asked.last_selftest_ts >= firedAt && asked.last_selftest_ts < firedAt + 10,
    `the periodic run is the one before (${asked.last_selftest_ts}, fired at ${firedAt})`,
  )
  t.equal(asked.last_fls_state, 0)

  const nc = await gatewayBus(t, device)
  t.strictSame(await systemOp(nc, device, 'diag_disable_selftest'), { status: 200 })
  t.notOk(clock.armed().includes(INTERVAL_MS), 'its timer is cancelled')
  clock.advance(INTERVAL_MS)
  t.equal((await call(`${device.httpUrl}/api/system/selftest`)).status, 200, 'an asked one still runs')
  t.equal((await periodicRuns(device)).length, 1, 'no periodic run once disabled')

  await device.restart()
  await until('the reboot answers', async () => (await call(`${device.httpUrl}/api/system/status`)).status === 200)
  t.ok(clock.armed().includes(INTERVAL_MS), 'the next boot arms it again')
  clock.advance(INTERVAL_MS)
  await until('periodic again after the reboot', async () => (await periodicRuns(device)).length === 2)
})
