// Model-based testing: paths generated from a machine definition (xstate/graph), run step by
// step against a real device. A state or transition added to a machine adds paths here without
// new test code; an event no driver knows fails the test until one is written (or the event is
// declared undrivable, with the reason).
import type { Test } from 'tap'
import { initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import { getShortestPaths, getSimplePaths } from 'xstate/graph'
import { LogType, type TransitionData } from '../../protocol/journal.js'
import { stateName } from '../../machines/replay.js'
import type { VersionedMachine } from '../../machines/types.js'
import { readJournal } from './journal.js'

export interface ModelStep {
  event: string
  /** The machine's state after the event, as TRANSITION records name it. */
  to: string
  from: string
}

export interface ModelPath {
  /** `init → EVENT → EVENT`, the test's name. */
  name: string
  steps: ModelStep[]
  /** The state the path ends in. */
  end: string
}

export interface PathOptions {
  input?: unknown
  /** Events the device can be made to produce; the traversal offers only these. */
  drivable: readonly string[]
  /** Paths reach states by name: context (such as the health bits) does not multiply them. */
  byStateName?: boolean
  /** Only simple paths up to this many steps (shortest paths are always kept). */
  maxSteps?: number
  /** Narrows what is explored, e.g. a state the device only reaches across a reboot. */
  filter?: (snapshot: AnyMachineSnapshot, event: { type: string }) => boolean
}

/** Every event type a machine's states name, so that a new transition is noticed. */
export function machineEvents(machine: AnyStateMachine): string[] {
  const types = new Set<string>()
  const visit = (node: { on: Record<string, unknown>; states: Record<string, unknown> }) => {
    for (const type of Object.keys(node.on)) types.add(type)
    for (const child of Object.values(node.states)) visit(child as typeof node)
  }
  visit(machine.root as unknown as { on: Record<string, unknown>; states: Record<string, unknown> })
  return [...types].sort()
}

/**
 * Shortest paths to every state, each extended by every event that changes it (so every
 * transition is taken at least once, the ones back to a visited state too), simple paths up to
 * `maxSteps`, and a shortest path through each transition still missing; every path that is a
 * prefix of another is dropped: checking after each step of the longer one covers it.
 */
export function modelPaths(machine: AnyStateMachine, o: PathOptions): ModelPath[] {
  const events = o.drivable.map((type) => ({ type }))
  const offered = (snapshot: AnyMachineSnapshot) => (o.filter ? events.filter((e) => o.filter!(snapshot, e)) : events)
  const traversal = {
    input: o.input,
    events: offered,
    ...(o.byStateName ? { serializeState: (snapshot: AnyMachineSnapshot) => stateName(snapshot) } : {}),
  } as Parameters<typeof getShortestPaths<AnyStateMachine>>[1]
  const paths = new Map<string, ModelPath>()
  // Snapshots are recomputed from the events: a traversal that merges states by name keeps
  // whichever snapshot it saw last under that name, not the one its steps lead to.
  const walk = (types: string[]): AnyMachineSnapshot[] => {
    const snapshots = [initialTransition(machine, o.input)[0]]
    for (const type of types) snapshots.push(transition(machine, snapshots.at(-1)!, { type })[0])
    return snapshots
  }
  const add = (types: string[]): AnyMachineSnapshot => {
    const snapshots = walk(types)
    const steps = types.map((event, i) => ({ event, from: stateName(snapshots[i]!), to: stateName(snapshots[i + 1]!) }))
    const name = ['init', ...types].join(' → ')
    paths.set(name, { name, steps, end: stateName(snapshots.at(-1)!) })
    return snapshots.at(-1)!
  }
  // Step 0 of a generated path is xstate.init, in the state the machine starts in.
  const typesOf = (path: { steps: { event: { type: string } }[] }) => path.steps.slice(1).map((s) => s.event.type)
  for (const path of getSimplePaths(machine, traversal))
    if (path.steps.length - 1 <= (o.maxSteps ?? Infinity)) add(typesOf(path))
  for (const path of getShortestPaths(machine, traversal)) {
    const types = typesOf(path)
    const reached = add(types)
    for (const event of offered(reached)) {
      if (changes(reached, transition(machine, reached, event)[0])) add([...types, event.type])
    }
  }
  // Merging states by name loses the transitions only some context allows (failed → secure
  // needs the temperature bit alone): every snapshot is reached once more, context included,
  // and each transition no path takes yet gets the shortest path to it.
  const taken = new Set([...paths.values()].flatMap((p) => p.steps.map(stepKey)))
  for (const { types, snapshot } of everySnapshot(machine, o.input, offered)) {
    for (const event of offered(snapshot)) {
      const [next] = transition(machine, snapshot, event)
      const key = stepKey({ from: stateName(snapshot), event: event.type, to: stateName(next) })
      if (changes(snapshot, next) && !taken.has(key)) {
        taken.add(key)
        add([...types, event.type])
      }
    }
  }
  const all = [...paths.values()]
  return all
    .filter((p) => !all.some((q) => q !== p && q.name.startsWith(`${p.name} → `)))
    .sort((a, b) => a.name.localeCompare(b.name))
}

const stepKey = (step: ModelStep) => `${step.from} ${step.event} ${step.to}`

/** An event that leaves the snapshot as it was is no transition. */
const changes = (from: AnyMachineSnapshot, to: AnyMachineSnapshot) =>
  stateName(to) !== stateName(from) || to.context !== from.context

/** Breadth-first over whole snapshots (state and context): each one, and the fewest events that reach it. */
function everySnapshot(
  machine: AnyStateMachine,
  input: unknown,
  offered: (snapshot: AnyMachineSnapshot) => { type: string }[],
): { types: string[]; snapshot: AnyMachineSnapshot }[] {
  const identity = (snapshot: AnyMachineSnapshot) => JSON.stringify([stateName(snapshot), snapshot.context])
  const start = { types: [] as string[], snapshot: initialTransition(machine, input)[0] }
  const reached = new Map([[identity(start.snapshot), start]])
  for (const { types, snapshot } of reached.values()) {
    for (const event of offered(snapshot)) {
      const [next] = transition(machine, snapshot, event)
      if (!reached.has(identity(next))) reached.set(identity(next), { types: [...types, event.type], snapshot: next })
    }
  }
  return [...reached.values()]
}

/** Fails when the machine names an event that is neither driven nor declared undrivable. */
export function checkDrivers(
  t: Test,
  machine: AnyStateMachine,
  drivable: readonly string[],
  undrivable: Record<string, string>,
): void {
  for (const type of machineEvents(machine)) {
    t.ok(drivable.includes(type) || type in undrivable, `${machine.id}: ${type} has a driver or a reason it has none`)
  }
  for (const type of [...drivable, ...Object.keys(undrivable)])
    t.ok(machineEvents(machine).includes(type), `${machine.id}: ${type} is still an event`)
}

/**
 * The TRANSITION records of one machine (and instance) in a device's journal, in order: what the
 * device says it did, to compare with what the model says after each step.
 */
export async function journaledTransitions(
  dataDir: string,
  spec: Pick<VersionedMachine, 'machine' | 'instance'>,
): Promise<TransitionData[]> {
  const { records } = await readJournal(dataDir)
  return records
    .filter((r) => r.type === LogType.TRANSITION)
    .map((r) => r.decoded as unknown as TransitionData)
    .filter((d) => d.machine === spec.machine.id && d.instance === spec.instance)
}

/** The step as a TRANSITION record would state it, for `t.match` against the journal. */
export function expectedRecord(spec: VersionedMachine, step: ModelStep): TransitionData {
  return {
    machine: spec.machine.id,
    ...(spec.instance !== undefined ? { instance: spec.instance } : {}),
    version: spec.version,
    from: step.from,
    to: step.to,
    event: step.event,
  }
}

/**
 * Fails for a transition the paths leave out of those the options allow (every snapshot the
 * drivable events reach, as the filter narrows them), and for a state no path reaches that is
 * not in `unreached`, with the reason: the paths walk every state and transition the machine has.
 */
export function checkCoverage(
  t: Test,
  machine: AnyStateMachine,
  paths: readonly ModelPath[],
  o: PathOptions,
  unreached: Record<string, string> = {},
): void {
  const events = o.drivable.map((type) => ({ type }))
  const offered = (snapshot: AnyMachineSnapshot) => (o.filter ? events.filter((e) => o.filter!(snapshot, e)) : events)
  const taken = new Set(paths.flatMap((p) => p.steps.map(stepKey)))
  const missing = new Set<string>()
  for (const { snapshot } of everySnapshot(machine, o.input, offered)) {
    for (const event of offered(snapshot)) {
      const [next] = transition(machine, snapshot, event)
      const key = stepKey({ from: stateName(snapshot), event: event.type, to: stateName(next) })
      if (changes(snapshot, next) && !taken.has(key)) missing.add(key)
    }
  }
  t.strictSame([...missing], [], `${machine.id}: every transition the drivers allow is taken by a path`)
  const reached = new Set([String(machine.config.initial), ...paths.flatMap((p) => p.steps.map((s) => s.to))])
  const states = Object.keys(machine.root.states)
  const left = states.filter((state) => !reached.has(state) && !(state in unreached))
  t.strictSame(left, [], `${machine.id}: every state is reached, or has the reason it is not`)
  for (const state of Object.keys(unreached))
    t.ok(states.includes(state) && !reached.has(state), `${machine.id}: ${state} is a state no path reaches`)
}
