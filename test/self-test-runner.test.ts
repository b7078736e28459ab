// The self-test's check of the key records over the bus: no answer, or a malformed one, is no self-test (the API
// answers 503); a damaged record raises 0x08 before the answer.
import { connect } from '@nats-io/transport-node'
import t, { type Test } from 'tap'
import { HealthMonitor } from '../actors/system/health-monitor.js'
import { RecordCheckUnavailableError, SelfTestRunner } from '../actors/system/self-test-runner.js'
import { nativeEngine, openHal } from '../hal/index.js'
import { encode, LogType, Subjects, VERIFY_RECORDS_OP } from '../protocol/index.js'
import { builtFirmware } from './helpers/device.js'
import { recordingJournal } from './helpers/journal.js'
import { silentLogger } from './helpers/logger.js'
import { startNats } from './helpers/nats.js'

async function runner(t: Test) {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const nc = await connect({ servers: nats.url })
  t.teardown(() => nc.close())
  const hal = await openHal({ variant: 'E', dataDir: `${t.testdirName}-hal`, firmware: await builtFirmware() })
  t.teardown(() => hal.close())
  const { journal, journaled } = recordingJournal()
  const health = new HealthMonitor({
    hal,
    journal,
    logger: silentLogger,
    temperatureRange: { min: -40, max: 85 },
    onChange: () => undefined,
  })
  await health.start()
  const tests = new SelfTestRunner({ nc, hal, journal, logger: silentLogger, health, engine: () => nativeEngine })
  tests.start()
  t.teardown(() => tests.stop())
  /** The key store's record check, as this test answers it. */
  const keystore = (body: unknown) =>
    nc.subscribe(new Subjects(hal.devid).command('keystore', VERIFY_RECORDS_OP), {
      callback: (_, msg) => void msg.respond(encode({ status: 200, body })),
    })
  return { nc, tests, health, journaled, keystore }
}

const stats = { total: 3, deleted: 1, invalid: 1, fragmented: 1, freeslots: 1020 }

t.test('no key store on the bus: no self-test runs, nothing is journaled', async (t) => {
  const { tests, journaled } = await runner(t)
  await t.rejects(tests.run('periodic'), RecordCheckUnavailableError)
  t.equal(journaled.filter((e) => e.type === LogType.SELFTEST_PASSED).length, 0)
})

t.test('a malformed record check counts as none', async (t) => {
  const { nc, tests, keystore } = await runner(t)
  for (const body of [
    { intact: 'yes', newlyInvalid: 0, repo_stats: stats },
    { intact: true, newlyInvalid: -1, repo_stats: stats },
    { intact: true, newlyInvalid: 0, repo_stats: { ...stats, freeslots: 1.5 } },
    { intact: true, newlyInvalid: 0 },
  ]) {
    const sub = keystore(body)
    await nc.flush()
    await t.rejects(tests.run('periodic'), RecordCheckUnavailableError, JSON.stringify(body))
    sub.unsubscribe()
  }
})

t.test(
  'a damaged record: INTEGRITY_FAILED from the self-test before the answer; only the five counts pass',
  async (t) => {
    const { nc, tests, health, journaled, keystore } = await runner(t)
    keystore({ intact: false, newlyInvalid: 1, repo_stats: { ...stats, extra: 'dropped' } })
    await nc.flush()
    const answer = await tests.run('periodic')
    t.equal(answer.fls_state, 0x08)
    t.equal(health.fls, 0x08)
    t.strictSame(answer.repo_stats, stats)
    t.notOk('se_state' in answer, 'no se_state on E')
    t.match(
      journaled.filter((e) => e.type === LogType.SELFTEST_PASSED || e.type === LogType.NON_SECURE_STATE),
      [
        { type: LogType.SELFTEST_PASSED, data: { source: 'periodic', records: 'damaged', failed: [] } },
        { type: LogType.NON_SECURE_STATE, data: { raised: 0x08, source: 'selftest', detail: { invalid: 1 } } },
      ],
    )
  },
)
