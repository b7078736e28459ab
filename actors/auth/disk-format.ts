import type { Logger } from 'pino'
import { FormatCancelledError, type Hal } from '../../hal/index.js'
import type { DeviceConfig, DiskFormatData, personalisationMachine } from '../../machines/index.js'
import { type JournalEntry, LogResult, type LogResultNumber, LogType } from '../../protocol/index.js'
import { EventRefusedError, type MachineRunner } from '../host/index.js'
import { usableSectors } from './config-rules.js'

/** Why a format runs: a new owner's personalisation, a new Disk 0 size, or a boot that found one unfinished. */
export type FormatCause = 'personalisation' | 'reformat' | 'boot'

/** Why a running format is cancelled: the device stops (or reboots), or a wipeout erases the disks. */
export type FormatCancel = 'stop' | 'wipeout'

/** What a format uses of the auth actor. */
export interface FormatContext {
  readonly hal: Hal
  readonly logger: Logger
  readonly config: DeviceConfig
  readonly personalisation: MachineRunner<typeof personalisationMachine>
  /** What status shows: `status<N>` while a format runs, then `done` or `failed`. */
  format: string | undefined
  publish(): void
  journal(entries: JournalEntry[]): Promise<void>
}

/**
 * The format of the disks (P) that personalisation's `formatting` state waits for: one at a time,
 * journaled from its start to its end (DISK_FORMAT records), shown in status as it goes. Only its
 * last step, FORMAT_DONE, leaves `formatting`: a format cancelled (a stop, a wipeout), failed or cut
 * by a power loss leaves the machine there, and the next boot starts it again from its beginning,
 * so that disks half formatted are never taken for formatted ones.
 */
export class DiskFormat {
  #run: { ended: Promise<void>; controller: AbortController } | undefined

  constructor(private readonly actor: FormatContext) {}

  /**
   * Starts the format; `found` are the records of what the boot found, journaled with its start.
   * Status shows `status0` before this returns, so that nothing reads the disks as formatted meanwhile.
   */
  start(cause: FormatCause, found: JournalEntry[] = []): void {
    if (this.#run) throw new Error('a format of the disks is already running')
    const controller = new AbortController()
    this.actor.format = 'status0'
    this.actor.publish()
    const run = { controller, ended: this.run(cause, found, controller.signal) }
    this.#run = run
    void run.ended.finally(() => {
      if (this.#run === run) this.#run = undefined
    })
  }

  /** Cancels a running format at its next step; resolves once it has ended (at once when none runs). */
  async cancel(why: FormatCancel): Promise<void> {
    const run = this.#run
    if (!run) return
    run.controller.abort(why)
    await run.ended
  }

  /** Never throws: how the format ended is journaled and shown. */
  private async run(cause: FormatCause, found: JournalEntry[], signal: AbortSignal): Promise<void> {
    const { actor } = this
    const disk0 = actor.config.storage_disk0size ?? actor.hal.storage.disk0Sectors
    const sizes = { disk0, disk1: usableSectors(actor.hal.storage) - disk0 }
    try {
      // The start is journaled before the first write: a journal that refuses it leaves the disks untouched.
      await actor.journal([...found, formatRecord(LogResult.OK, { phase: 'start', cause, ...sizes })])
      await actor.hal.disks!.format(
        disk0,
        (percent) => {
          actor.format = `status${percent}`
          actor.publish()
        },
        signal,
      )
      const finished = await this.finish(sizes)
      // A device wiped out meanwhile shows no format, as the wipeout leaves it.
      actor.format = finished ? 'done' : undefined
      if (!finished) actor.logger.info('the device was wiped out while its disks were formatted')
    } catch (err) {
      if (err instanceof FormatCancelledError) {
        actor.logger.info({ why: signal.reason }, 'the format of the disks was cancelled; the next boot formats them')
        actor.format = undefined
        await this.record(LogResult.FAILED, { phase: 'cancelled', reason: String(signal.reason) })
      } else {
        actor.logger.error({ err: (err as Error).message }, 'formatting the disks failed; the next boot formats them')
        actor.format = 'failed'
        await this.record(LogResult.ERROR, { phase: 'failed', reason: (err as Error).message })
      }
    }
    actor.publish()
  }

  /** FORMAT_DONE and the `done` record, in one append; false when a wipeout has left nothing to finish. */
  private async finish(sizes: { disk0: number; disk1: number }): Promise<boolean> {
    try {
      await this.actor.personalisation.send({ type: 'FORMAT_DONE' }, [
        formatRecord(LogResult.OK, { phase: 'done', ...sizes }),
      ])
      return true
    } catch (err) {
      // Refused although the format was waited for: only a wipeout leaves `formatting`.
      if (err instanceof EventRefusedError) return false
      throw err
    }
  }

  /** The end of a format that did not finish: what the journal refuses is only logged, the format has ended. */
  private async record(result: LogResultNumber, data: FormatRecordData): Promise<void> {
    try {
      await this.actor.journal([formatRecord(result, data)])
    } catch (err) {
      this.actor.logger.error(
        { err: (err as Error).message, phase: data.phase },
        'the end of the format is not journaled',
      )
    }
  }
}

type FormatRecordData = DiskFormatData & Record<string, unknown>

/** A DISK_FORMAT record: the device's own doing, so no subject. */
export function formatRecord(result: LogResultNumber, data: FormatRecordData): JournalEntry {
  return { type: LogType.DISK_FORMAT, result, data }
}
