// The journal writer: one writer per device, group-committing concurrent appends into one
// durable append (one fdatasync) per batch, sealing often, rotating by size.

import { performance } from 'node:perf_hooks'
import { setImmediate } from 'node:timers/promises'
import { processMetrics } from '../metrics/index.js'
import type { JournalMedia, Timer } from '../hal/index.js'
import { encodeEntry, type EncodedEntry } from './encode-entry.js'
import { commitSealed, JournalAnchoring } from './journal-anchoring.js'
import { headMessage } from './seal-message.js'
import { JournalClosedError, JournalWriteError } from './errors.js'
import { prefetchFiles, recoverJournal } from './recover-journal.js'
import { SegmentWriter, type SegmentDeps } from './segment-writer.js'
import {
  encodeBase64,
  type JournalEntry,
  type JournalPosition,
  type LinkData,
  type RecoveryReport,
  type SealReason,
  type SignedHead,
} from '../protocol/index.js'
import type { JournalLogger, JournalOptions } from './journal-options.js'

interface Pending {
  entries: EncodedEntry[]
  resolve: (positions: JournalPosition[]) => void
  reject: (err: unknown) => void
}

interface Settings {
  media: JournalMedia
  deps: SegmentDeps
  random: (n: number) => Uint8Array
  banner: string
  sealEvery: number
  rotateBytes: number
  logger: JournalLogger | undefined
  anchoring: JournalAnchoring | undefined
}

const SEGMENT_ID = /^[0-9a-f]{8}$/

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`)
  return value
}

/** Ids are the opening time in seconds, kept strictly increasing when files open within a second. */
function nextSegmentId(previous: string | undefined, nowMs: number): string {
  const floor = previous === undefined ? 0 : parseInt(previous, 16) + 1
  return Math.max(Math.floor(nowMs / 1000), floor)
    .toString(16)
    .padStart(8, '0')
}

export class Journal {
  private queue: Pending[] = []
  private draining: Promise<void> | undefined
  private sealDue = false
  private closed = false
  private closing: Promise<void> | undefined
  /** Kept across failed rotations so that a retry reuses the file the failed attempt cut back to empty. */
  private nextId: string | undefined
  private readonly timer: Timer
  private readonly metrics = processMetrics()

  private constructor(
    private readonly settings: Settings,
    readonly recovery: RecoveryReport,
    private segment: SegmentWriter,
    sealIntervalMs: number,
  ) {
    this.timer = settings.deps.clock.timer(sealIntervalMs, () => this.requestSeal(), { repeat: true, unref: true })
  }

  static async open(options: JournalOptions): Promise<Journal> {
    const { media, signer, clock, random, banner, logger, anchor } = options
    if (!banner.startsWith('#') || /[\n\r]/.test(banner)) throw new TypeError('banner must be one line starting with #')
    const settings: Settings = {
      media,
      deps: { signer, clock },
      random,
      banner,
      logger,
      anchoring: anchor && new JournalAnchoring(anchor, logger, options),
      sealEvery: positiveInteger('sealEvery', options.sealEvery ?? 256),
      rotateBytes: positiveInteger('rotateBytes', options.rotateBytes ?? 8 * 1024 * 1024),
    }
    const sealIntervalMs = positiveInteger('sealIntervalMs', options.sealIntervalMs ?? 30_000)
    // First of all: the checks are the longest part of an open, and the other core is idle meanwhile.
    const prefetched = options.prefetchChecks ? await prefetchFiles(media, signer.publicKey) : undefined
    const { report, link, reuseId } = await recoverJournal(media, settings.deps, prefetched?.newest, settings.anchoring)
    if (!report.intact)
      logger?.warn({ previous: report.previous, problems: report.problems }, 'journal: the journal does not verify')
    else if (report.previous !== undefined) {
      logger?.info(
        { previous: report.previous, cutBytes: report.cutBytes, sealedRecovered: report.sealedRecovered },
        'journal: recovered',
      )
    }
    const id = reuseId ?? nextSegmentId(report.previous, clock.now())
    const segment = await Journal.createSegment(settings, id, link)
    return new Journal(settings, report, segment, sealIntervalMs)
  }

  private static createSegment(settings: Settings, id: string, link: LinkData): Promise<SegmentWriter> {
    const key = settings.random(32)
    if (key.length !== 32) throw new Error('random(32) did not return 32 bytes')
    if (!SEGMENT_ID.test(id)) throw new Error('segment ids are exhausted')
    const banner = settings.banner.replaceAll('{id}', id)
    return SegmentWriter.create(settings.media, id, { banner, key, link }, settings.deps)
  }

  get fileId(): string {
    return this.segment.id
  }

  /** Chain head over everything durably written to the current file. */
  get head(): Uint8Array {
    return new Uint8Array(this.segment.head)
  }

  get publicKey(): Uint8Array {
    return this.settings.deps.signer.publicKey
  }

  /** The newest durable record and the chain head after it, signed now with the log key. */
  signedHead(): SignedHead {
    const { id, lastSeq, head } = this.segment
    const sig = this.settings.deps.signer.sign(headMessage(id, lastSeq, head))
    return { file: id, seq: lastSeq, head: encodeBase64(head), sig: encodeBase64(sig) }
  }

  /** Resolves once the entries are durably stored, with where each landed. */
  async append(entries: JournalEntry[]): Promise<JournalPosition[]> {
    if (this.closed) throw new JournalClosedError()
    const encoded = entries.map(encodeEntry)
    if (encoded.length === 0) return []
    return new Promise((resolve, reject) => {
      this.queue.push({ entries: encoded, resolve, reject })
      this.schedule()
    })
  }

  /** Waits for pending appends, seals the file with reason `close` and closes it. */
  close(): Promise<void> {
    this.closing ??= this.shutdown()
    return this.closing
  }

  private async shutdown(): Promise<void> {
    this.closed = true
    this.timer.cancel()
    while (this.draining) await this.draining
    const segment = this.segment
    try {
      // The close seal must not follow the remains of a failed write.
      await segment.repair()
      // A segment ended by rotation (its successor failed to open) needs no further seal.
      if (segment.writable) {
        const batch = segment.begin()
        segment.addSeal(batch, 'close')
        await commitSealed(segment, batch, this.settings.anchoring)
      }
    } catch (err) {
      throw new JournalWriteError('journal: the close seal could not be written', { cause: err })
    } finally {
      await segment.close()
      await this.settings.anchoring?.settled()
    }
  }

  private requestSeal(): void {
    if (this.segment.unsealed === 0) return
    this.sealDue = true
    this.schedule()
  }

  private hasWork(): boolean {
    return this.queue.length > 0 || (this.sealDue && this.segment.unsealed > 0)
  }

  private schedule(): void {
    if (this.draining) return
    this.draining = (async () => {
      // The first write waits for the end of the turn: the commands of one envelope append in the
      // same turn (bus/service-host.ts), and so share one write and one fsync.
      await setImmediate()
      while (this.hasWork()) await this.flush(this.queue.splice(0))
    })().finally(() => {
      this.draining = undefined
      // Work queued between the loop's last check and now would otherwise wait forever.
      if (this.hasWork()) this.schedule()
    })
  }

  /**
   * Writes one batch: every queued entry, plus a seal when due, in one durable append. Never
   * throws. A file that a failed write left broken is repaired first; until that works every
   * batch is refused, so that no record ever follows the remains of a failed one.
   */
  private async flush(items: Pending[]): Promise<void> {
    const { sealEvery, rotateBytes, logger } = this.settings
    const sealRequested = this.sealDue
    this.sealDue = false
    let positions: JournalPosition[][]
    let seal: SealReason | undefined
    try {
      if (this.segment.broken) await this.segment.repair()
      if (!this.segment.writable) await this.rotate()
      const segment = this.segment
      const batch = segment.begin()
      positions = items.map((item) =>
        item.entries.map((entry) => ({ file: segment.id, seq: segment.addRecord(batch, entry) })),
      )
      if (segment.size + batch.bytes >= rotateBytes) seal = 'rotate'
      else if (batch.unsealed >= sealEvery || (sealRequested && batch.unsealed > 0)) seal = 'periodic'
      const started = performance.now()
      if (seal) {
        segment.addSeal(batch, seal)
        await commitSealed(segment, batch, this.settings.anchoring)
      } else await segment.commit(batch)
      this.committed(items, seal !== undefined, started)
    } catch (err) {
      if (this.segment.broken)
        logger?.warn(
          { err, file: this.segment.id },
          'journal: write failed and could not be cut back; appends are refused until it can',
        )
      else logger?.warn({ err, file: this.segment.id }, 'journal: write failed')
      const error = new JournalWriteError('journal: write failed', { cause: err })
      for (const item of items) item.reject(error)
      return
    }
    items.forEach((item, i) => item.resolve(positions[i] ?? []))
    if (seal === 'rotate') {
      await this.rotate().catch((err: unknown) =>
        logger?.warn({ err }, 'journal: rotation failed; retrying with the next write'),
      )
    }
  }

  /** Counts a durable batch: its records, its seal, how long its write and fdatasync took. */
  private committed(items: Pending[], sealed: boolean, started: number): void {
    const { metrics } = this
    if (!metrics) return
    metrics.journalFsync.observe((performance.now() - started) / 1000)
    let records = 0
    for (const item of items) records += item.entries.length
    metrics.journalRecords.inc(records)
    if (sealed) metrics.journalSeals.inc()
  }

  /** Starts a new file linked to the current one's last durable record. */
  private async rotate(): Promise<void> {
    const old = this.segment
    const link = { prev: old.id, head: old.head, seq: old.lastSeq }
    this.nextId ??= nextSegmentId(old.id, this.settings.deps.clock.now())
    this.segment = await Journal.createSegment(this.settings, this.nextId, link)
    this.nextId = undefined
    this.settings.logger?.info({ from: old.id, to: this.segment.id }, 'journal: rotated')
    await old
      .close()
      .catch((err: unknown) =>
        this.settings.logger?.warn({ err, file: old.id }, 'journal: closing a rotated file failed'),
      )
  }
}
