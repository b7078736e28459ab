import {
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type SnapshotFrom,
  type StateValueFrom,
} from 'xstate'
import { LogResult, LogType, SerialQueue, type JournalEntry, type TransitionData } from '../../protocol/index.js'
import { stateName, type VersionedMachine } from '../../machines/index.js'
import { EventRefusedError } from './event-refused-error.js'
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
 *
 * An event the machine cannot take in its state is refused: `send` throws EventRefusedError
 * and journals nothing, not even the caller's entries. It throws rather than returning a
 * `{ refused }` result because a host goes on to act (open a disk, write a slot) once `send`
 * returns: a result nobody looked at would let the effects run anyway, a throw fails closed.
 * Hosts that answer a refusal differently from an error catch it, or ask `can` first where the
 * contract wants the refusal answered before other checks. Sends run one at a time, so a `can`
 * asked before a send may be stale by its turn: the send asks again, and refuses then. Nothing
 * may send to a runner from within one of its sends (the journal port): it would wait for ever.
 */
export class MachineRunner<M extends AnyStateMachine> {
  private current: AnyMachineSnapshot
  private readonly sends = new SerialQueue()

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

  /** The state's name, as TRANSITION records and read models show it; compare states with `matches`. */
  get state(): string {
    return stateName(this.current)
  }

  /** Whether the machine takes `event` now: a transition is enabled (its guard passes). */
  can(event: EventFromLogic<M>): boolean {
    return this.current.can(event)
  }

  /** Whether the machine is in `value` (or a state within it), named by the machine's own state values. */
  matches(value: StateValueFrom<M>): boolean {
    return this.current.matches(value)
  }

  /**
   * Decides, journals and adopts; throws EventRefusedError when the machine cannot take `event`.
   * An event the machine takes without leaving its state (a self-transition) is no refusal:
   * only the caller's entries are journaled.
   */
  send(event: EventFromLogic<M>, entries: JournalEntry[] = [], subject?: string): Promise<StepResult> {
    // One at a time: each decides from the state the one before it adopted, never from a state
    // another send is leaving (two transitions "from" one state would not replay).
    return this.sends.run(() => this.step(event, entries, subject))
  }

  private async step(event: EventFromLogic<M>, entries: JournalEntry[], subject?: string): Promise<StepResult> {
    if (!this.current.can(event))
      throw new EventRefusedError(this.spec.machine.id, this.spec.instance, this.state, event.type)
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
