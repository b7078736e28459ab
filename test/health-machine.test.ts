// The health machine (fls_state) and its host's sampling, without a device.
import t, { type Test } from 'tap'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import { HealthMonitor, type HeapReading } from '../actors/system/health-monitor.js'
import { faultOf } from '../bus/fault-of.js'
import { EntropyError, EntropyHealthError, openHal } from '../hal/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { FAULT_EVENTS, FLS } from '../protocol/fail-state.js'
import { healthMachine, SELF_CLEARING, type HealthEvent } from '../machines/health.js'
import { builtFirmware } from './helpers/device.js'
import { silentLogger } from './helpers/logger.js'
import { noHead, recordingJournal } from './helpers/journal.js'

function run(events: HealthEvent['type'][]): AnyMachineSnapshot {
  let snapshot = initialTransition(healthMachine)[0] as AnyMachineSnapshot
  for (const type of events)
    snapshot = transition(healthMachine, snapshot, { type } as HealthEvent)[0] as AnyMachineSnapshot
  return snapshot
}

const view = (s: AnyMachineSnapshot) => ({ state: s.value, fls: s.context.fls })

t.test('every fault raises its own bit of fls_state, once', async (t) => {
  t.same(view(run([])), { state: 'secure', fls: 0 })
  for (const [type, bit] of Object.entries(FAULT_EVENTS)) {
    t.same(view(run([type as HealthEvent['type']])), { state: 'failed', fls: bit }, type)
  }
  t.same(view(run(['KAT_FAILED', 'ENTROPY_FAILED', 'INTEGRITY_FAILED'])), { state: 'failed', fls: 0x0b })
  const once = run(['STACK_OVERFLOW'])
  t.equal(
    transition(healthMachine, once, { type: 'STACK_OVERFLOW' })[0],
    once,
    'a raised bit raised again changes nothing (nothing to journal)',
  )
  t.same(Object.values(FLS), [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80], "the seed's bits")
})

t.test('only the temperature clears by itself, and only its own bit', async (t) => {
  t.equal(SELF_CLEARING, FLS.TEMPERATURE)
  t.same(view(run(['TEMPERATURE_OUT_OF_RANGE', 'TEMPERATURE_IN_RANGE'])), { state: 'secure', fls: 0 })
  t.same(view(run(['TEMPERATURE_OUT_OF_RANGE', 'ENTROPY_FAILED', 'TEMPERATURE_IN_RANGE'])), {
    state: 'failed',
    fls: FLS.ENTROPY,
  })
  t.same(
    view(run(['ENTROPY_FAILED', 'TEMPERATURE_IN_RANGE'])),
    { state: 'failed', fls: FLS.ENTROPY },
    'nothing to clear',
  )
  t.same(view(run(['TEMPERATURE_IN_RANGE'])), { state: 'secure', fls: 0 })
})

t.test("a check-in's lock and shutdown are terminal for the boot", async (t) => {
  t.same(view(run(['CHECKIN_LOCK'])), { state: 'locked', fls: FLS.LOCKED })
  t.same(view(run(['KAT_FAILED', 'CHECKIN_LOCK'])), { state: 'locked', fls: FLS.LOCKED | FLS.KAT })
  t.same(view(run(['CHECKIN_LOCK', 'CHECKIN_SHUTDOWN'])), { state: 'shut_down', fls: FLS.LOCKED | FLS.SHUTDOWN })
  t.same(
    view(run(['CHECKIN_SHUTDOWN', 'CHECKIN_LOCK'])),
    { state: 'shut_down', fls: FLS.SHUTDOWN },
    'no way back from a shutdown',
  )
  t.same(view(run(['CHECKIN_LOCK', 'TEMPERATURE_OUT_OF_RANGE', 'TEMPERATURE_IN_RANGE'])), {
    state: 'locked',
    fls: FLS.LOCKED,
  })
  t.same(view(run(['CHECKIN_SHUTDOWN', 'ENTROPY_FAILED'])), { state: 'shut_down', fls: FLS.SHUTDOWN | FLS.ENTROPY })
})

async function monitor(t: Test, heap: () => HeapReading) {
  const hal = await openHal({ variant: 'E', dataDir: t.testdir(), firmware: await builtFirmware() })
  t.teardown(() => hal.close())
  const { journal, journaled } = recordingJournal()
  let changes = 0
  const health = new HealthMonitor({
    hal,
    journal,
    logger: silentLogger,
    temperatureRange: { min: 0, max: 50 },
    heap,
    onChange: () => changes++,
  })
  return { hal, health, journaled, changes: () => changes }
}

t.test('a heap above 90% of its limit for three samples in a row raises 0x10', async (t) => {
  let used = 95
  const { health, journaled, changes } = await monitor(t, () => ({ used, limit: 100 }))
  await health.start()
  await health.sample()
  used = 50
  await health.sample()
  used = 91
  await health.sample()
  await health.sample()
  t.equal(health.fls, 0, 'a dip starts the count again: two high samples are garbage before a collection')
  await health.sample()
  t.equal(health.fls, FLS.ALLOCATION)
  t.equal(changes(), 1)
  t.match(
    journaled.filter((e) => e.type !== LogType.STARTUP),
    [
      {
        type: LogType.TRANSITION,
        data: { machine: 'health', from: 'secure', to: 'failed', event: 'ALLOCATION_FAILED' },
      },
      {
        type: LogType.NON_SECURE_STATE,
        result: LogResult.ERROR,
        data: { fls: 0x10, raised: 0x10, source: 'heap', detail: { used: 91, limit: 100 } },
      },
    ],
  )
  await health.sample()
  t.equal(journaled.length, 2, 'raised once')
})

t.test('the temperature: out of range raises 0x04; back only 2 °C inside the range clears it', async (t) => {
  const { hal, health, journaled } = await monitor(t, () => ({ used: 0, limit: 1 }))
  const temperature = async (celsius: number | undefined) => {
    await hal.faults!.setTemperature(celsius)
    await health.sample()
    return health.fls
  }
  await health.start()
  t.equal(await temperature(50), 0, 'the edge is in range')
  t.equal(await temperature(51), FLS.TEMPERATURE)
  t.equal(await temperature(49), FLS.TEMPERATURE, 'within the hysteresis: still raised')
  t.equal(await temperature(48), 0)
  t.equal(await temperature(-1), FLS.TEMPERATURE, 'too cold counts too')
  t.equal(await temperature(undefined), 0, 'the normal reading (36 °C)')
  t.match(
    journaled.filter((e) => e.type === LogType.NON_SECURE_STATE),
    [
      { result: LogResult.ERROR, data: { raised: 4, temp: 51, min: 0, max: 50 } },
      { result: LogResult.OK, data: { fls: 0, cleared: 4, temp: 48 } },
      { result: LogResult.ERROR, data: { raised: 4, temp: -1 } },
      { result: LogResult.OK, data: { cleared: 4, temp: 36 } },
    ],
  )
})

t.test('the entropy source: a stuck source found by the sampler raises 0x02 with TRNG_FAILED', async (t) => {
  const { hal, health, journaled } = await monitor(t, () => ({ used: 0, limit: 1 }))
  await health.start()
  await hal.faults!.setEntropy('stuck')
  await health.sample()
  t.equal(health.fls, FLS.ENTROPY)
  t.match(journaled.at(-1), {
    type: LogType.TRNG_FAILED,
    result: LogResult.ERROR,
    data: { raised: 2, source: 'continuous', detail: { test: 'repetition_count' } },
  })
  await hal.faults!.setEntropy('none')
  await health.sample()
  t.equal(health.fls, FLS.ENTROPY, 'a repaired source stays failed until the next boot')
  t.equal(hal.entropy.startup(), undefined, "the next boot's start-up test passes")
  const rebooted = new HealthMonitor({
    hal,
    journal: { append: async () => [], status: async () => ({ fileId: 'x', intact: true }), head: noHead },
    logger: silentLogger,
    temperatureRange: { min: 0, max: 50 },
    onChange: () => undefined,
  })
  await rebooted.start()
  t.equal(rebooted.fls, 0, 'and the next boot starts secure')
})

t.test('what the machine refuses journals nothing: a fault raised again, an order already in force', async (t) => {
  const { health, journaled, changes } = await monitor(t, () => ({ used: 0, limit: 1 }))
  const report = () => health.report({ fault: 'KAT_FAILED', source: 'selftest' })
  const order = (type: 'CHECKIN_LOCK' | 'CHECKIN_SHUTDOWN', bit: number) =>
    health.order(type, { type: LogType.NON_SECURE_STATE, result: LogResult.ERROR, data: { raised: bit } })
  await report()
  await report()
  await order('CHECKIN_LOCK', FLS.LOCKED)
  await order('CHECKIN_LOCK', FLS.LOCKED)
  await order('CHECKIN_SHUTDOWN', FLS.SHUTDOWN)
  await order('CHECKIN_LOCK', FLS.LOCKED)
  await order('CHECKIN_SHUTDOWN', FLS.SHUTDOWN)
  t.equal(health.fls, FLS.KAT | FLS.LOCKED | FLS.SHUTDOWN)
  t.equal(changes(), 3)
  t.same(
    journaled.filter((e) => e.type === LogType.TRANSITION).map((e) => e.data?.event),
    ['KAT_FAILED', 'CHECKIN_LOCK', 'CHECKIN_SHUTDOWN'],
  )
  t.same(
    journaled.filter((e) => e.type === LogType.NON_SECURE_STATE).map((e) => e.data?.raised),
    [FLS.KAT, FLS.LOCKED, FLS.SHUTDOWN],
    'one record per bit raised: the refused ones journal no claim that they raised anything',
  )
})

t.test('which errors are faults of the device rather than of a request', async (t) => {
  t.equal(faultOf(new EntropyHealthError({ test: 'repetition_count' })), 'ENTROPY_FAILED')
  t.equal(faultOf(new EntropyError('gone')), 'ENTROPY_FAILED')
  t.equal(faultOf(new RangeError('Maximum call stack size exceeded')), 'STACK_OVERFLOW')
  t.equal(faultOf(new RangeError('Array buffer allocation failed')), 'ALLOCATION_FAILED')
  t.equal(
    faultOf(Object.assign(new RangeError('Cannot create a Buffer'), { code: 'ERR_MEMORY_ALLOCATION_FAILED' })),
    'ALLOCATION_FAILED',
  )
  t.equal(faultOf(new RangeError('offset out of range')), undefined)
  t.equal(faultOf(new Error('Maximum call stack size exceeded')), undefined, 'only the RangeError V8 throws')
  t.equal(faultOf('boom'), undefined)
})
