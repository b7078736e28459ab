import { initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate'
import type { TransitionData } from '../protocol/index.js'

export class ReplayError extends Error {
  override readonly name = 'ReplayError'
}

/** The name a snapshot's state goes by in TRANSITION records. */
export function stateName(snapshot: { value: unknown }): string {
  return typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value)
}

/**
 * One machine (one instance of it, where it runs more than once) moved by its recorded
 * transitions through the machine itself: each record must start where the last one ended,
 * and the machine, given the recorded event, must really go where the record says. A record
 * of an unknown machine version is refused; records of other machines or instances are ignored.
 */
export class TransitionFold {
  private current: AnyMachineSnapshot

  constructor(
    private readonly machine: AnyStateMachine,
    private readonly version: number,
    input?: unknown,
    private readonly instance?: string,
  ) {
    this.current = initialTransition(machine, input)[0]
  }

  get snapshot(): AnyMachineSnapshot {
    return this.current
  }

  get state(): string {
    return stateName(this.current)
  }

  /** Whether the record is one of this machine's (and instance's) transitions. */
  owns(record: TransitionData): boolean {
    return record.machine === this.machine.id && record.instance === this.instance
  }

  apply(record: TransitionData): void {
    if (!this.owns(record)) return
    const name = this.instance === undefined ? this.machine.id : `${this.machine.id} ${this.instance}`
    if (record.version !== this.version)
      throw new ReplayError(`${name} version ${record.version} is unknown (this runtime knows ${this.version})`)
    const from = this.state
    if (record.from !== from) throw new ReplayError(`${name}: a transition from ${record.from} while in ${from}`)
    const next = transition(this.machine, this.current, { type: record.event })[0]
    if (stateName(next) !== record.to) {
      throw new ReplayError(`${name}: ${record.event} leads from ${from} to ${stateName(next)}, not ${record.to}`)
    }
    this.current = next
  }
}

/** Folds one machine's recorded transitions (see TransitionFold) and returns where it ends. */
export function replayTransitions(
  machine: AnyStateMachine,
  version: number,
  records: Iterable<TransitionData>,
  input?: unknown,
  instance?: string,
): AnyMachineSnapshot {
  const fold = new TransitionFold(machine, version, input, instance)
  for (const record of records) fold.apply(record)
  return fold.snapshot
}
