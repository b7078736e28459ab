// The periodic self-test: every selfTestIntervalMs, journaled with source `periodic`, feeding the next answer's
// last_*; the DIAG build's diag_disable_selftest stops it until the next boot.
import { hostClock } from '../hal/sim/host-clock.js'
import t from 'tap'
import type { Clock } from '../hal/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import type { Device } from '../runtime/types.js'
import { bootDevice } from './helpers/device.js'
import { gatewayBus, systemOp } from './helpers/gateway-bus.js'
import { call } from './helpers/http.js'
import { holdIntervals } from './helpers/intervals.js'
import { readJournal } from './helpers/journal.js'
import { until } from './helpers/until.js'

/** An interval nothing else uses: the test fires the periodic self-test itself. */
const INTERVAL_MS = 4321

async function periodicRuns(device: Device) {
  return (await readJournal(device.dataDir)).records.filter(
    (r) => r.type === LogType.SELFTEST_PASSED && r.decoded?.source === 'periodic',
  )
}

t.test('every selfTestIntervalMs a whole self-test; disable_selftest stops it until the next boot', async (t) => {
  const timers = holdIntervals(t, INTERVAL_MS)
  let offset = 0
  const clock: Clock = {
    now: () => Date.now() + offset,
    monotonic: () => Number(process.hrtime.bigint() / 1_000_000n),
    isSet: () => true,
    sleep: hostClock.sleep,
  }
  const device = await bootDevice(t, {
    dataDir: t.testdir(),
    variant: 'E',
    diag: true,
    clock,
    selfTestIntervalMs: INTERVAL_MS,
  })
  t.equal(timers.length, 1, 'the boot armed it, with the interval given')
  offset += 20_000
  const firedAt = Math.floor(clock.now() / 1000)
  timers[0]!.fire()
  await until('a periodic self-test journaled', async () => (await periodicRuns(device)).length === 1)
  t.match((await periodicRuns(device))[0], { result: LogResult.OK, subject: '', decoded: { source: 'periodic' } })
  t.notOk('rid' in ((await periodicRuns(device))[0]!.decoded ?? {}), 'no request behind it')

  offset += 20_000
  const asked = (await call(`${device.httpUrl}/api/system/selftest`)).json
  t.ok(
    asked.last_selftest_ts >= firedAt && asked.last_selftest_ts < firedAt + 10,
    `the periodic run is the one before (${asked.last_selftest_ts}, fired at ${firedAt})`,
  )
  t.equal(asked.last_fls_state, 0)

  const nc = await gatewayBus(t, device)
  t.strictSame(await systemOp(nc, device, 'diag_disable_selftest'), { status: 200 })
  t.ok(timers[0]!.cleared, 'its timer is cleared')
  timers[0]!.fire()
  t.equal((await call(`${device.httpUrl}/api/system/selftest`)).status, 200, 'an asked one still runs')
  t.equal((await periodicRuns(device)).length, 1, 'no periodic run once disabled')

  await device.restart()
  await until('the reboot answers', async () => (await call(`${device.httpUrl}/api/system/status`)).status === 200)
  t.equal(timers.length, 2, 'the next boot arms it again')
  timers[1]!.fire()
  await until('periodic again after the reboot', async () => (await periodicRuns(device)).length === 2)
})
