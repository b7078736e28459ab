import type { CommandRequest, JournalEntry } from '../../protocol/index.js'
import {
  machineRegistry,
  type upgradeMachine,
  versioned,
  type UpgradeContext,
  type UpgradeEvent,
  type UpgradeKind,
} from '../../machines/index.js'
import type { StateValueFrom } from 'xstate'
import { EventRefusedError, type JournalPort, journalSubject, MachineRunner } from '../host/index.js'

export type UpgradeStateValue = StateValueFrom<typeof upgradeMachine>

/**
 * One upgrade pipeline: its `upgrade` machine, journaled through a MachineRunner. Every rule is
 * the machine's; the pipeline keeps only an outcome the journal did not take, to journal it again.
 */
export class Pipeline {
  readonly runner: MachineRunner<typeof upgradeMachine>
  /**
   * The outcome of a check, an install or a staging that could not open, which the journal did not
   * take: the machine waits in `checking`, `installing` or `receiving`, which no command moves, so
   * it is journaled before the next command of the pipeline.
   */
  private unjournaled?: () => Promise<void>

  constructor(
    readonly kind: UpgradeKind,
    journal: JournalPort,
    /** Called after every step the machine took: the read model shows it. */
    private readonly stepped: () => void,
  ) {
    this.runner = new MachineRunner(versioned(machineRegistry.upgrade, kind), journal, undefined, { kind })
  }

  get context(): UpgradeContext {
    return this.runner.snapshot.context
  }

  /** Sends `event`, journaled with `entries` under the request's subject; EventRefusedError when refused. */
  async step(event: UpgradeEvent, req: CommandRequest | undefined, entries: JournalEntry[] = []): Promise<void> {
    await this.runner.send(event, entries, req ? journalSubject(req.principal).subject : undefined)
    this.stepped()
  }

  /**
   * Steps, and tells the state the machine refused the event in (nothing journaled then), or
   * undefined when it took it. The refusing state picks the contract's answer: `matches` asked
   * after the refusal could see a later state (an install's outcome, a check's).
   */
  async refusal(event: UpgradeEvent, req: CommandRequest): Promise<UpgradeStateValue | undefined> {
    try {
      await this.step(event, req)
      return undefined
    } catch (err) {
      // The runner names the state it refused in: one of this machine's (flat) state values.
      if (err instanceof EventRefusedError) return err.state as UpgradeStateValue
      throw err
    }
  }

  /** Journals an outcome; one the journal refuses is kept for `settle`. */
  outcome(event: UpgradeEvent, req: CommandRequest | undefined, entries?: JournalEntry[]): Promise<void> {
    return this.journalOutcome(() => this.step(event, req, entries))
  }

  /** Journals an outcome the journal refused before, if any: the machine is stuck until it is. */
  async settle(): Promise<void> {
    if (this.unjournaled) await this.journalOutcome(this.unjournaled)
  }

  private async journalOutcome(record: () => Promise<void>): Promise<void> {
    this.unjournaled = undefined
    try {
      await record()
    } catch (err) {
      if (!(err instanceof EventRefusedError)) this.unjournaled = record
      throw err
    }
  }
}
