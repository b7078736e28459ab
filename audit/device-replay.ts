// Rebuilds the state of a whole device from its exported journal files, offline, by folding the
// records through the same machines and reducers the runtime runs.

import { type JournalFile, LogType, type Variant } from '../protocol/index.js'
import {
  configEvent,
  type DeviceConfig,
  factoryConfig,
  MachineFolds,
  reduceConfig,
  ReplayError,
} from '../machines/index.js'
import { readAuditJournal, type AuditJournal, type AuditRecord } from './audit-journal.js'
import { JournalReplayError, parseTransitionData, type VerifyOptions } from '../eventstore/index.js'
import { KeyCatalogue, MalformedKeyRecordError, type KeyMetadata } from './key-catalogue.js'
import { KeyFolds } from './key-replay.js'
import { formatReplayPoint, ReplayPointError, type ReplayPoint } from './replay-point.js'

/** The state of a device at one record of its journal: plain data, as JSON shows it. */
export interface DeviceReplay {
  /** The last record folded. `time` in Unix seconds. */
  at: { file: string; seq: number; time: number }
  /** Boots seen up to `at`, the current one included. */
  boots: number
  variant: Variant
  personalisation: string
  provisioning: string
  config: DeviceConfig
  /** P only: the state of each disk machine. */
  disks?: { '0': string; '1': string }
  upgrades: { fw: string; ui: string }
  health: { state: string; fls: number }
  lifecycle: string
  /** The key repository by kid. */
  keys: Record<string, KeyMetadata>
  /** Each key's lifecycle machine by kid (machines/key-lifecycle.ts), invalid ones too. */
  keyStates: Record<string, string>
}

/** How the files are verified first (an open newest file, signed heads), and where to stop. */
export interface ReplayOptions extends VerifyOptions {
  /** Stop at this record (included), or before the first record later than this time. Default: the end. */
  at?: ReplayPoint
}

/**
 * Verifies the files, then folds every record up to `options.at`. Identity (personalisation,
 * provisioning), configuration and keys persist across boots, so the files must reach back to
 * the device's first; the disks, upgrades, health and lifecycle start afresh at every boot.
 * Throws TamperedJournalError (the files do not verify), JournalReplayError (a record the
 * machines refuse, or an incomplete history) or ReplayPointError (`at` is not in the files).
 */
export function replayDevice(files: JournalFile[], publicKey: Uint8Array, options: ReplayOptions = {}): DeviceReplay {
  const { at: _at, ...verify } = options
  const journal = readAuditJournal(files, publicKey, verify)
  const start = journal.layout.gaps.find((gap) => gap.atStart)
  if (start) {
    throw new JournalReplayError(
      start.file,
      undefined,
      `the history is incomplete: it links to ${start.missing}, which is not among the files given, ` +
        "and identity, configuration and keys are rebuilt from every file since the device's first",
    )
  }
  return new DeviceFold(journalVariant(journal)).run(journal.records, options.at)
}

const BANNER_VARIANT = /\svariant ([PE])(\s|$)/

/** The variant each file's banner names; they must agree. */
function journalVariant(journal: AuditJournal): Variant {
  let found: { variant: Variant; file: string } | undefined
  for (const [file, banner] of journal.banners) {
    const variant = BANNER_VARIANT.exec(banner)?.[1] as Variant | undefined
    if (!variant) continue
    if (found && found.variant !== variant)
      throw new JournalReplayError(
        file,
        undefined,
        `the banner says variant ${variant}, but ${found.file} says ${found.variant}`,
      )
    found ??= { variant, file }
  }
  if (!found)
    throw new JournalReplayError(journal.records[0]!.file, undefined, 'no file banner names the variant (P or E)')
  return found.variant
}

class DeviceFold {
  /**
   * Identity (personalisation, provisioning) is folded across every boot, as the auth actor folds
   * it at its start; the machines of one boot start afresh whenever the device boots, as the
   * runtime's do (the disks take their power-up state from storage_mode, nothing staged for an
   * upgrade survives a boot, the start-up tests derive fls_state again, the lifecycle is the boot's own).
   */
  private readonly identity: MachineFolds
  private boot: MachineFolds
  private config: DeviceConfig
  private readonly keys = new KeyCatalogue()
  /** Every key's lifecycle, one fold per KID, kept across boots (a boot ends an unjournaled deletion). */
  private readonly keyFolds = new KeyFolds()
  private boots = 0

  constructor(private readonly variant: Variant) {
    this.identity = new MachineFolds(variant, 'device')
    this.boot = new MachineFolds(variant, 'boot')
    this.config = factoryConfig(variant)
  }

  run(records: AuditRecord[], at: ReplayPoint | undefined): DeviceReplay {
    let last: AuditRecord | undefined
    for (const record of records) {
      if (at && 'time' in at && record.time > at.time) break
      try {
        this.apply(record)
      } catch (err) {
        if (err instanceof ReplayError || err instanceof MalformedKeyRecordError)
          throw new JournalReplayError(record.file, record.seq, err.message, { cause: err })
        throw err
      }
      last = record
      if (at && 'file' in at && record.file === at.file && record.seq === at.seq) break
    }
    if (at && 'file' in at && (last?.file !== at.file || last.seq !== at.seq))
      throw new ReplayPointError(`no record ${formatReplayPoint(at)} in the files given`)
    if (!last)
      throw new ReplayPointError(`no record is at or before ${formatReplayPoint(at!)}: the journal starts later`)
    return this.state(last)
  }

  private apply(record: AuditRecord): void {
    if (record.boot !== this.boots) {
      this.boot = new MachineFolds(this.variant, 'boot')
      if (this.boots > 0) this.keyFolds.boot()
      this.boots = record.boot
    }
    if (record.type === LogType.TRANSITION) this.transition(record)
    const event = configEvent(record)
    if (event) this.config = reduceConfig(this.config, event, this.variant)
    if (event?.kind === 'wiped') [this.keys, this.keyFolds].forEach((keys) => keys.clear())
    this.keys.apply(record)
    this.keyFolds.applyKeyRecord(record)
  }

  private transition(record: AuditRecord): void {
    const transition = parseTransitionData(record.decoded)
    if (!transition) throw new ReplayError('TRANSITION data is malformed')
    if (this.keyFolds.owns(transition)) return this.keyFolds.apply(transition)
    ;(this.identity.owns(transition) ? this.identity : this.boot).apply(transition)
  }

  private state(last: AuditRecord): DeviceReplay {
    const { identity, boot } = this
    const [disk0, disk1] = [boot.state('disk', '0'), boot.state('disk', '1')]
    return {
      at: { file: last.file, seq: last.seq, time: last.time },
      boots: this.boots,
      variant: this.variant,
      personalisation: identity.state('personalisation')!,
      provisioning: identity.state('provisioning')!,
      config: { ...this.config },
      ...(disk0 !== undefined && disk1 !== undefined ? { disks: { '0': disk0, '1': disk1 } } : {}),
      upgrades: { fw: boot.state('upgrade', 'fw')!, ui: boot.state('upgrade', 'ui')! },
      health: { state: boot.state('health')!, fls: (boot.snapshot('health')!.context as { fls: number }).fls },
      lifecycle: boot.state('lifecycle')!,
      keys: this.keys.entries(),
      keyStates: this.keyFolds.states(),
    }
  }
}
