import { initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import type { TransitionData } from '../eventstore/types.js'

export class ReplayError extends Error {
  override readonly name = 'ReplayError'
}

/** The name a snapshot's state goes by in TRANSITION records. */
export function stateName(snapshot: { value: unknown }): string {
  return typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value)
}

/**
 * Folds one machine's recorded transitions through the machine itself, checking that each
 * record starts where the last one ended and that the machine, given the recorded event,
 * really goes where the record says. A record of an unknown machine version is refused.
 */
export function replayTransitions(
  machine: AnyStateMachine,
  version: number,
  records: Iterable<TransitionData>,
  input?: unknown,
): AnyMachineSnapshot {
  let snapshot = initialTransition(machine, input)[0]
  for (const record of records) {
    if (record.machine !== machine.id) continue
    if (record.version !== version) throw new ReplayError(`${machine.id} version ${record.version} is unknown (this runtime knows ${version})`)
    const from = stateName(snapshot)
    if (record.from !== from) throw new ReplayError(`${machine.id}: a transition from ${record.from} while in ${from}`)
    const next = transition(machine, snapshot, { type: record.event })[0]
    if (stateName(next) !== record.to) {
      throw new ReplayError(`${machine.id}: ${record.event} leads from ${from} to ${stateName(next)}, not ${record.to}`)
    }
    snapshot = next
  }
  return snapshot
}
