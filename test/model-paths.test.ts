// The path generator of the model-based tests (helpers/model-paths.ts), on every machine in
// machines/registry.ts, without a device: every transition is taken by some path, no path is a prefix of
// another, names are the events in order and stable, and an event without a driver fails.
import t, { type Test } from 'tap'
import { initialTransition, setup, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import { registeredMachines, stateName } from '../machines/index.js'
import {
  checkCoverage,
  checkDrivers,
  machineEvents,
  modelPaths,
  type ModelPath,
  type PathOptions,
} from './helpers/model-paths.js'

/** The options each machine's model test passes beside its drivers. */
const OPTIONS: Record<string, Omit<PathOptions, 'drivable' | 'input'>> = {
  // Context (the fls bits) would multiply the states: by name, and simple paths of three steps, as model-health.
  health: { byStateName: true, maxSteps: 3 },
}

/** Every registered machine, with each input a device of either variant runs it with. */
const machines = registeredMachines.map((entry) => {
  const inputs = new Map<string, unknown>()
  for (const variant of ['P', 'E'] as const)
    for (const { input } of entry.instances(variant)) inputs.set(JSON.stringify(input) ?? '', input)
  // One per subject (a key per KID) takes no input.
  return { machine: entry.machine as AnyStateMachine, inputs: inputs.size > 0 ? [...inputs.values()] : [undefined] }
})
const byName = new Map(machines.map(({ machine }) => [machine.id, machine]))

const triple = (from: string, event: string, to: string) => `${from} —${event}→ ${to}`

/**
 * Every transition the machine can take from a reachable snapshot, by state name: each state ×
 * event that changes the snapshot (a move, or new context), found breadth-first over whole
 * snapshots (context included), so that a transition only some context allows is found too.
 */
function reachableTransitions(machine: AnyStateMachine, input: unknown): Set<string> {
  const events = machineEvents(machine)
  const key = (s: AnyMachineSnapshot) => `${stateName(s)} ${JSON.stringify(s.context)}`
  const start = initialTransition(machine, input)[0]
  const seen = new Set([key(start)])
  const queue = [start]
  const transitions = new Set<string>()
  for (let snapshot = queue.shift(); snapshot; snapshot = queue.shift()) {
    for (const type of events) {
      const [next] = transition(machine, snapshot, { type })
      if (stateName(next) === stateName(snapshot) && next.context === snapshot.context) continue
      transitions.add(triple(stateName(snapshot), type, stateName(next)))
      if (!seen.has(key(next))) {
        seen.add(key(next))
        queue.push(next)
      }
    }
  }
  return transitions
}

const taken = (paths: ModelPath[]) => new Set(paths.flatMap((p) => p.steps.map((s) => triple(s.from, s.event, s.to))))

t.test('on every machine and input', async (t) => {
  for (const { machine, inputs } of machines) {
    for (const input of inputs) {
      t.test(`${machine.id} ${JSON.stringify(input) ?? ''}`, async (t) => {
        const options = { input, drivable: machineEvents(machine), ...OPTIONS[machine.id] }
        const paths = modelPaths(machine, options)
        t.ok(paths.length > 0, `${paths.length} paths`)
        const missing = [...reachableTransitions(machine, input)].filter((tr) => !taken(paths).has(tr))
        t.strictSame(missing, [], 'every transition is taken by some path')
        t.notOk(
          paths.some((p) => paths.some((q) => q !== p && q.name.startsWith(`${p.name} → `))),
          'no path is a prefix of another',
        )
        for (const path of paths) walks(t, machine, input, path)
        t.strictSame(modelPaths(machine, options), paths, 'generated again: the same paths')
      })
    }
  }
})

/** The name is the events in order, and each step is where the machine really goes. */
function walks(t: Test, machine: AnyStateMachine, input: unknown, path: ModelPath): void {
  let snapshot = initialTransition(machine, input)[0]
  const steps = path.steps.map(({ event }) => {
    const from = stateName(snapshot)
    snapshot = transition(machine, snapshot, { type: event })[0]
    return { event, from, to: stateName(snapshot) }
  })
  t.strictSame(
    { name: path.name, steps: path.steps, end: path.end },
    { name: ['init', ...steps.map((s) => s.event)].join(' → '), steps, end: stateName(snapshot) },
    path.name,
  )
}

t.test('names are stable', async (t) => {
  const names = (id: string, input?: unknown) =>
    modelPaths(byName.get(id)!, { input, drivable: machineEvents(byName.get(id)!) }).map((p) => p.name)
  t.strictSame(
    names('personalisation', { variant: 'P' }),
    [
      'init → PERSONALISE → FORMAT_DONE → REFORMAT',
      'init → PERSONALISE → FORMAT_DONE → WIPEOUT',
      'init → PERSONALISE → WIPEOUT',
      'init → RESTORE → FORMAT_DONE',
    ],
    'personalisation P',
  )
  t.strictSame(
    names('personalisation', { variant: 'E' }),
    ['init → PERSONALISE → WIPEOUT', 'init → RESTORE'],
    'personalisation E',
  )
  t.strictSame(names('provisioning'), ['init → PROVISION'], 'provisioning')
  t.strictSame(
    names('lifecycle'),
    ['init → FAULT → STOP', 'init → READY → FAULT → STOP', 'init → READY → STOP', 'init → STOP'],
    'lifecycle',
  )
})

t.test('drivable, filter and maxSteps narrow what is explored', async (t) => {
  const lifecycle = byName.get('lifecycle')!
  const noFault = modelPaths(lifecycle, { drivable: ['READY', 'STOP'] })
  t.strictSame(
    noFault.map((p) => p.name),
    ['init → READY → STOP', 'init → STOP'],
    'an event not offered is never taken',
  )
  const filtered = modelPaths(lifecycle, {
    drivable: machineEvents(lifecycle),
    filter: (s, e) => !(s.value === 'running' && e.type === 'FAULT'),
  })
  t.notOk(
    filtered.some((p) => p.steps.some((s) => s.from === 'running' && s.event === 'FAULT')),
    'a filtered transition is never taken',
  )
  const health = byName.get('health')!
  const short = modelPaths(health, { drivable: machineEvents(health), byStateName: true, maxSteps: 1 })
  const longest = Math.max(...short.map((p) => p.steps.length))
  // Three: TEMPERATURE_IN_RANGE that leaves another bit up (failed → failed, locked → locked) needs two bits first.
  t.ok(
    longest <= 3,
    'maxSteps 1: simple paths of one step, shortest paths extended by one, ' +
      `one through each transition left (${longest})`,
  )
})

t.test('checkDrivers fails for an event with neither a driver nor a reason', async (t) => {
  const tiny = setup({ types: { events: {} as { type: 'GO' } | { type: 'HALT' } } }).createMachine({
    id: 'tiny',
    initial: 'a',
    states: { a: { on: { GO: 'b' } }, b: { on: { HALT: 'a' } } },
  })
  const verdicts = (drivable: string[], undrivable: Record<string, string>) => {
    const seen: [boolean, string][] = []
    checkDrivers(
      { ok: (value: unknown, message: string) => seen.push([Boolean(value), message]) } as unknown as Test,
      tiny,
      drivable,
      undrivable,
    )
    return seen.filter(([ok]) => !ok).map(([, message]) => message)
  }
  t.strictSame(verdicts(['GO', 'HALT'], {}), [], 'all driven')
  t.strictSame(verdicts(['GO'], { HALT: 'no way to halt' }), [], 'one declared undrivable, with its reason')
  t.strictSame(
    verdicts(['GO'], {}),
    ['tiny: HALT has a driver or a reason it has none'],
    'an event without a driver fails',
  )
  t.strictSame(
    verdicts(['GO', 'HALT', 'JUMP'], {}),
    ['tiny: JUMP is still an event'],
    'a driver for an event the machine no longer names fails',
  )
})

t.test('checkCoverage fails for a state or transition no path takes', async (t) => {
  const tiny = setup({ types: { events: {} as { type: 'GO' } | { type: 'HALT' } | { type: 'JUMP' } } }).createMachine({
    id: 'tiny',
    initial: 'a',
    states: { a: { on: { GO: 'b', JUMP: 'c' } }, b: { on: { HALT: 'a' } }, c: {} },
  })
  const verdicts = (drivable: string[], walked: string[], unreached: Record<string, string> = {}) => {
    const seen: [boolean, string][] = []
    const record = (value: boolean, message: string) => void seen.push([value, message])
    const test = {
      ok: (value: unknown, message: string) => record(Boolean(value), message),
      strictSame: (found: unknown, wanted: unknown, message: string) =>
        record(JSON.stringify(found) === JSON.stringify(wanted), message),
    } as unknown as Test
    checkCoverage(test, tiny, modelPaths(tiny, { drivable: walked }), { drivable }, unreached)
    return seen.filter(([ok]) => !ok).map(([, message]) => message)
  }
  const all = ['GO', 'HALT', 'JUMP']
  t.strictSame(verdicts(all, all), [], 'every state and transition walked')
  t.strictSame(verdicts(['GO', 'HALT'], ['GO', 'HALT'], { c: 'nothing jumps' }), [], 'c unreached, with its reason')
  t.strictSame(
    verdicts(['GO', 'HALT'], ['GO', 'HALT']),
    ['tiny: every state is reached, or has the reason it is not'],
    'a state left out without a reason fails',
  )
  t.strictSame(
    verdicts(all, ['GO', 'JUMP']),
    ['tiny: every transition the drivers allow is taken by a path'],
    'a transition left out fails',
  )
  t.strictSame(
    verdicts(all, all, { c: 'stale' }),
    ['tiny: c is a state no path reaches'],
    'a reason for a state that is reached fails',
  )
})
