// Runs generated model paths (model-paths.ts) against real devices: a fresh device per path,
// and after every step the journal's TRANSITION record and the state as the device shows it.
import type { Test } from 'tap'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import type { TransitionData } from '../../protocol/journal.js'
import { stateName } from '../../machines/replay.js'
import type { VersionedMachine } from '../../machines/types.js'
import { expectedRecord, journaledTransitions, type ModelPath, type ModelStep } from './model-paths.js'
import { until } from './until.js'

/** Where a path stands: `index` is the step being driven or just observed (-1 before the first). */
export interface Walk {
  path: ModelPath
  index: number
  /**
   * The machine's records up to this step: a driver whose reboot starts the machine again sets it past what it did to
   * get there.
   */
  since: number
  /** The model after the step (before the first: the initial snapshot). */
  snapshot: AnyMachineSnapshot
}

/** The event after the walk's step, if the path goes on. */
export function nextEvent(walk: Walk): string | undefined {
  return walk.path.steps[walk.index + 1]?.event
}

export interface ModelDevice {
  dataDir: string
}

export interface ModelRun<D extends ModelDevice> {
  spec: VersionedMachine
  input?: unknown
  /** A fresh device (its own data dir) for one path. */
  boot(t: Test, path: ModelPath): Promise<D>
  /** Makes the device produce the event; the walk waits for its record afterwards. */
  drivers: Record<string, (device: D, walk: Walk) => Promise<void>>
  /** What the device must show in each state; a state without one fails the path. */
  observations: Record<string, (t: Test, device: D, walk: Walk) => Promise<void>>
  /** States the device leaves by itself (a check in the background): the next step's record may already be there. */
  transient?: readonly string[]
  /** How long a step may take to be journaled (a reboot into new firmware takes seconds). */
  stepMs?: number
}

/** Every state of the machine has an observation: a new state without one fails here first. */
export function checkObservations<D extends ModelDevice>(t: Test, run: ModelRun<D>): void {
  for (const state of Object.keys(run.spec.machine.states))
    t.ok(state in run.observations, `${run.spec.machine.id}: state ${state} has an observation`)
}

/** The paths as subtests, `jobs` devices at a time. */
export function walkPaths<D extends ModelDevice>(
  t: Test,
  run: ModelRun<D>,
  paths: readonly ModelPath[],
  jobs: number,
): void {
  t.jobs = jobs
  for (const path of paths) t.test(path.name, (t) => walkPath(t, run, path))
}

async function walkPath<D extends ModelDevice>(t: Test, run: ModelRun<D>, path: ModelPath): Promise<void> {
  const { spec } = run
  const device = await run.boot(t, path)
  const records = () => journaledTransitions(device.dataDir, spec)
  const walk: Walk = {
    path,
    index: -1,
    since: (await records()).length,
    snapshot: initialTransition(spec.machine, run.input)[0],
  }
  await observe(t, run, device, walk)
  for (const [index, step] of path.steps.entries()) {
    walk.index = index
    const driver = run.drivers[step.event]
    if (!driver) throw new Error(`no driver for ${step.event}`)
    await driver(device, walk)
    let gained: TransitionData[] = []
    await until(
      `${step.event} journaled`,
      async () => (gained = (await records()).slice(walk.since)).length > 0,
      run.stepMs ?? 20_000,
    )
    checkRecords(t, run, step, gained)
    walk.since += 1
    walk.snapshot = transition(spec.machine, walk.snapshot, { type: step.event })[0]
    await observe(t, run, device, walk)
  }
}

/** Exactly the step's record, unless the device may already have left a transient state on its own. */
function checkRecords<D extends ModelDevice>(
  t: Test,
  run: ModelRun<D>,
  step: ModelStep,
  gained: TransitionData[],
): void {
  t.match(gained[0], expectedRecord(run.spec, step), `${step.event}: ${step.from} → ${step.to} journaled`)
  const onItsOwn = run.transient?.includes(step.to) && gained.length === 2 && gained[1]!.from === step.to
  t.ok(
    gained.length === 1 || onItsOwn,
    `${step.event}: no other ${run.spec.machine.id} record (${gained.length - 1} more)`,
  )
}

async function observe<D extends ModelDevice>(t: Test, run: ModelRun<D>, device: D, walk: Walk): Promise<void> {
  const state = stateName(walk.snapshot)
  const observation = run.observations[state]
  if (!observation) throw new Error(`no observation for state ${state}`)
  await t.test(`in ${state}${walk.index >= 0 ? ` after ${walk.path.steps[walk.index]!.event}` : ''}`, (t) =>
    observation(t, device, walk),
  )
}
