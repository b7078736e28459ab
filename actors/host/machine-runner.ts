import {
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type SnapshotFrom,
} from 'xstate'
import { LogResult, LogType, type JournalEntry, type TransitionData } from '../../protocol/index.js'
import { stateName } from '../../machines/index.js'
import type { VersionedMachine } from '../../machines/index.js'
import type { JournalPort } from './journal-port.js'

export interface StepResult {
  from: string
  to: string
  changed: boolean
}

/**
 * Runs a pure machine the event-sourced way: decide with `transition()`, append the
 * transition (and the caller's audit entries) durably, and only then adopt the new state.
 * If the journal refuses the records, the state does not change.
 */
export class MachineRunner<M extends AnyStateMachine> {
  private current: AnyMachineSnapshot

  /** Starts from `snapshot` (rebuilt from the journal) or from the machine's initial state. */
  constructor(
    private readonly spec: VersionedMachine<M>,
    private readonly journal: JournalPort,
    snapshot?: AnyMachineSnapshot,
    input?: unknown,
  ) {
    this.current = snapshot ?? initialTransition(spec.machine as AnyStateMachine, input)[0]
  }

  get snapshot(): SnapshotFrom<M> {
    return this.current as SnapshotFrom<M>
  }

  get state(): string {
    return stateName(this.current)
  }

  async send(event: EventFromLogic<M>, entries: JournalEntry[] = [], subject?: string): Promise<StepResult> {
    const [next] = transition(this.spec.machine as AnyStateMachine, this.current, event)
    const from = this.state
    const to = stateName(next)
    const changed = next !== this.current && (from !== to || next.context !== this.current.context)
    const records = changed ? [this.transitionEntry(from, to, event.type, subject), ...entries] : entries
    if (records.length > 0) await this.journal.append(records)
    this.current = next
    return { from, to, changed }
  }

  private transitionEntry(from: string, to: string, event: string, subject?: string): JournalEntry {
    const data: TransitionData = {
      machine: this.spec.machine.id,
      ...(this.spec.instance !== undefined ? { instance: this.spec.instance } : {}),
      version: this.spec.version,
      from,
      to,
      event,
    }
    return { type: LogType.TRANSITION, result: LogResult.OK, data: { ...data }, ...(subject ? { subject } : {}) }
  }
}
