// The journal mirror: copies the device's journal, record by record and in order, into its
// JetStream stream on the fleet backend, while the owner trusts the backend (`trusted_backend`).
//
// Exactly once: every (re)connection starts from the stream's own last record (not from memory),
// checks that it is the journal's record of that file and seq, byte for byte, and publishes the
// records after it, each expecting the previous one as the subject's last message. A publication
// whose acknowledgement was lost, a second writer, or anything else that moved the stream makes
// the next publication fail instead of duplicating or interleaving a record; the mirror then starts
// over from the stream's last record. The deduplication id is a second guard within JetStream's window.
//
// The last message of every batch carries the log key's signature over the chain head after its
// record (HEAD_SIG_HEADER): whoever can write to the stream can append records whose MACs hold (the
// file key is in KEY_INIT), but not a signed head over them, so every mirrored record is covered by
// the device's signature before the next seal reaches the stream.

import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { bytesEqual, ed25519Verifier, fromBase64Url, headMessage } from '../../eventstore/index.js'
import {
  FILE_HEADER,
  HEAD_HEADER,
  HEAD_SIG_HEADER,
  headerPosition,
  journalMsgId,
  journalStream,
  journalStreamConfig,
  journalStreamId,
  journalSubject,
  SEQ_HEADER,
  StreamApi,
  type StoredMessage,
} from '../../bus/index.js'
import type { EnclaveSigner } from '../../hal/index.js'
import type { MirrorLag, MirrorStatus, Variant } from '../../protocol/index.js'
import { journalStanding } from './journal-standing.js'
import { JournalTail, type DurableJournal, type RecordPosition, type TailRecord } from './journal-tail.js'
import { OwnerConsent } from './owner-consent.js'

export interface MirrorOptions {
  devid: string
  variant: Variant
  journal: DurableJournal
  /** The log key: it signs the head of every batch. */
  signer: EnclaveSigner
  /** The generation of the device's stream mirrored to (bus/stream-names.ts); default 1. */
  generation?: number
  /** Told each change of the mirror's state. */
  onStatus?: (status: MirrorStatus) => void
  /** The mirror's own connection to the device's bus (its user, in the account the backend link is bound to). */
  connect(): Promise<NatsConnection>
  /** The backend's JetStream domain. */
  domain: string
  logger: Logger
  /** How often it looks for new durable records (a seal written on a timer tells no one). */
  pollMs?: number
  /** Waits between attempts while the backend cannot be reached: doubling from `min` up to `max`. */
  retryMs?: { min: number; max: number }
}

/** At most this many records go without a signed head while the mirror catches up. */
const BATCH = 256

/** Where the stream stands when it holds none of the journal: before every record. */
const STREAM_START: RecordPosition = { file: '', seq: -1 }

/** A record was in the stream already: stored by a publication this session does not know of. */
export class DuplicateRecordError extends Error {
  override readonly name = 'DuplicateRecordError'
}

/** The stream does not continue this device's journal: the mirror publishes nothing to it. */
export class StreamMismatchError extends Error {
  override readonly name = 'StreamMismatchError'
}

/** The stream holds a record this device signed that its journal no longer has: the journal went back. */
export class JournalRollbackError extends Error {
  override readonly name = 'JournalRollbackError'
}

interface Session {
  api: StreamApi
  tail: JournalTail
  /** Stream sequence of the subject's last message: what the next publication expects. */
  last: number
  /** A record read but not yet published: not yet covered by the owner's consent, or read ahead. */
  pending: TailRecord | undefined
}

export class JournalMirror {
  private stopped = false
  private wake: (() => void) | undefined
  private nc: NatsConnection | undefined
  private session: Session | undefined
  private readonly consent: OwnerConsent
  /** Reads ahead of the publications: consent is what the journal says up to here. */
  private readonly scan: JournalTail
  private frontier: RecordPosition | undefined
  private readonly done: Promise<void>
  /** The stream id of the generation mirrored to (journalStreamId). */
  private readonly id: string
  private status: MirrorStatus | undefined
  /** The journal's last record in the stream, once the stream was read: what the lag counts from. */
  private mirrored: RecordPosition | undefined
  /** The journal time of the first durable record after `mirrored`, when one is known. */
  private oldest: number | undefined
  /** The last seq of every file the scan read (seqs run from 0 in each file): the lag's count. */
  private readonly lastSeqs = new Map<string, number>()

  private constructor(private readonly o: MirrorOptions) {
    this.id = journalStreamId(o.devid, o.generation)
    this.consent = new OwnerConsent(o.variant)
    this.scan = new JournalTail(o.journal)
    this.done = this.run()
  }

  /** Starts following the journal; never throws, never holds up the device. */
  static start(o: MirrorOptions): JournalMirror {
    return new JournalMirror(o)
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.wake?.()
    // A request in flight fails at once instead of at its timeout; nothing is lost, the stream says where to resume.
    await this.nc?.close()
    await this.done
    // Connected while stopping.
    await this.nc?.close()
  }

  private async run(): Promise<void> {
    const { logger } = this.o
    const retry = this.o.retryMs ?? { min: 250, max: 5_000 }
    let failures = 0
    let mirroring = false
    while (!this.stopped) {
      try {
        await this.follow()
        if (this.consent.trustedBackend !== mirroring) {
          mirroring = this.consent.trustedBackend
          logger.info(
            { stream: journalStream(this.id) },
            mirroring
              ? 'mirror: the owner trusts the backend: mirroring the journal'
              : 'mirror: the owner does not trust the backend: not mirroring',
          )
        }
        if (mirroring) await this.publish()
        else {
          this.session = undefined
          this.mirrored = this.oldest = undefined
          this.report('off')
        }
        if (failures > 0) logger.info({ attempts: failures }, 'mirror: the backend is reachable again')
        failures = 0
        await this.sleep(this.o.pollMs ?? 500)
      } catch (err) {
        this.session = undefined
        failures++
        const message = (err as Error).message
        const rollback = err instanceof JournalRollbackError
        const mismatch = rollback || err instanceof StreamMismatchError
        const state = rollback ? 'rollback' : mismatch ? 'mismatch' : 'unreachable'
        this.report(state, mismatch ? message : undefined)
        // Once per outage, not at every attempt.
        if (failures === 1 && state === 'rollback')
          logger.error(
            { err: message, stream: journalStream(this.id) },
            "mirror: the journal went back behind the stream (the device's data was rolled back); " +
              'nothing is published to it',
          )
        else if (failures === 1 && mismatch)
          logger.error(
            { err: message, stream: journalStream(this.id) },
            'mirror: the stream does not continue this journal; nothing is published to it ' +
              '(docs/operations.md: start the next stream generation)',
          )
        else if (failures === 1) logger.warn({ err: message }, 'mirror: cannot mirror now; retrying')
        await this.sleep(Math.min(retry.max, retry.min * 2 ** Math.min(failures - 1, 16)))
      }
    }
  }

  private report(state: MirrorStatus['state'], detail?: string): void {
    const lag = this.lag()
    const status: MirrorStatus = {
      state,
      stream: journalStream(this.id),
      ...(detail ? { detail } : {}),
      ...(lag ? { lag } : {}),
    }
    const was = this.status
    if (
      was?.state === status.state &&
      was.detail === status.detail &&
      was.lag?.records === lag?.records &&
      was.lag?.oldest === lag?.oldest
    )
      return
    this.status = status
    this.o.onStatus?.(status)
  }

  private lag(): MirrorLag | undefined {
    const at = this.mirrored
    if (!at) return undefined
    let records = 0
    for (const [file, last] of this.lastSeqs)
      if (file > at.file) records += last + 1
      else if (file === at.file) records += Math.max(0, last - at.seq)
      // Wholly in the stream: it counts no more.
      else this.lastSeqs.delete(file)
    return records > 0 && this.oldest !== undefined ? { records, oldest: this.oldest } : { records }
  }

  /** Folds what was durably written since the last look into the owner's consent. */
  private async follow(): Promise<void> {
    for (let record = await this.scan.next(); record; record = await this.scan.next()) {
      this.consent.fold(record.record)
      this.frontier = record
      this.lastSeqs.set(record.file, record.seq)
      if (this.oldest === undefined && this.mirrored && after(record, this.mirrored)) this.oldest = record.record.time
    }
  }

  private async publish(): Promise<void> {
    this.nc ??= await this.o.connect()
    const session = (this.session ??= await this.open(new StreamApi(this.nc, this.o.domain)))
    const subject = journalSubject(this.id)
    const consented = (record: TailRecord | undefined): record is TailRecord =>
      record !== undefined && this.frontier !== undefined && !after(record, this.frontier)
    for (let count = 1; !this.stopped; count++) {
      const record = session.pending ?? (await session.tail.next())
      session.pending = undefined
      if (!consented(record)) {
        session.pending = record
        this.report('mirroring')
        return
      }
      this.oldest = record.record.time
      // Read ahead: the batch ends where nothing more may be published now.
      session.pending = await session.tail.next()
      const last = count % BATCH === 0 || !consented(session.pending)
      const ack = await session.api.publish(subject, record.bytes, {
        'Nats-Msg-Id': journalMsgId(this.id, record.file, record.seq),
        'Nats-Expected-Last-Subject-Sequence': String(session.last),
        [FILE_HEADER]: record.file,
        [SEQ_HEADER]: record.seq.toString(16),
        ...(last ? this.signedHead(record) : {}),
      })
      // Start over from the stream, which knows what it holds.
      if (ack.duplicate)
        throw new DuplicateRecordError(`record ${record.file}:${record.seq.toString(16)} was in the stream already`)
      session.last = ack.seq
      this.mirrored = record
      this.oldest = session.pending?.record.time
      if (last) this.report('mirroring')
    }
  }

  private signedHead(record: TailRecord): Record<string, string> {
    const sig = this.o.signer.sign(headMessage(record.file, record.seq, record.head))
    return {
      [HEAD_HEADER]: Buffer.from(record.head).toString('base64url'),
      [HEAD_SIG_HEADER]: Buffer.from(sig).toString('base64url'),
    }
  }

  /**
   * Throws JournalRollbackError when the stream's newest message signed by this device (among its
   * last BATCH: every batch ends with one) holds a record the journal has neither kept nor gone on
   * past. Messages nobody signed prove nothing: those are a mismatch at most.
   */
  private async refuseRollback(api: StreamApi, stream: string, last: StoredMessage): Promise<void> {
    const verify = ed25519Verifier(this.o.signer.publicKey)
    for (let seq = last.seq, looked = 0; seq >= 1 && looked < BATCH; seq--, looked++) {
      const message = seq === last.seq ? last : await api.message(stream, { seq })
      const at = message && signedPosition(message)
      if (!at || !verify(headMessage(at.file, at.seq, at.head), at.sig)) continue
      if ((await journalStanding(this.o.journal, at)) !== 'behind') return
      const where = `${at.file}:${at.seq.toString(16)}`
      throw new JournalRollbackError(
        `message ${message.seq} of ${stream}, signed by this device, holds record ${where}, which the journal ` +
          'no longer has: the journal went back (the data dir was rolled back or restored)',
      )
    }
  }

  /** Finds the stream (creating it when missing) and where the journal continues after its last record. */
  private async open(api: StreamApi): Promise<Session> {
    const { journal, logger } = this.o
    const stream = journalStream(this.id)
    if (!(await api.info(stream))) {
      await api.create(journalStreamConfig(this.id))
      logger.info({ stream }, 'mirror: created the stream')
    }
    const last = await api.message(stream, { lastBySubject: journalSubject(this.id) })
    if (!last) return this.opened(STREAM_START, { api, tail: new JournalTail(journal), last: 0, pending: undefined })
    const from = headerPosition(last.headers?.get(FILE_HEADER), last.headers?.get(SEQ_HEADER))
    if (!from) throw new StreamMismatchError(`message ${last.seq} of ${stream} names no journal record`)
    const tail = new JournalTail(journal, from)
    const first = await tail.next()
    const at = `${from.file}:${from.seq.toString(16)}`
    const resumes = first?.file === from.file && first.seq === from.seq
    if (resumes && bytesEqual(first.bytes, last.data)) {
      logger.info({ stream, after: at, seq: last.seq }, "mirror: resuming after the stream's last record")
      return this.opened(from, { api, tail, last: last.seq, pending: undefined })
    }
    await this.refuseRollback(api, stream, last)
    if (resumes)
      throw new StreamMismatchError(`record ${at} (message ${last.seq} of ${stream}) differs from the journal's`)
    // The file is gone from the device (deleted): the journal goes on with the next one.
    if (!(await journal.media.list()).includes(from.file))
      return this.opened(from, { api, tail, last: last.seq, pending: first })
    throw new StreamMismatchError(`the journal has no record ${at} (message ${last.seq} of ${stream}) yet`)
  }

  /** The oldest record the stream lacks is the first the session publishes. */
  private opened(mirrored: RecordPosition, session: Session): Session {
    this.mirrored = mirrored
    this.oldest = undefined
    return session
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wake = done
    })
  }
}

function after(a: RecordPosition, b: RecordPosition): boolean {
  return a.file > b.file || (a.file === b.file && a.seq > b.seq)
}

/** The record a message names and the head it signs, when it carries both headers. */
function signedPosition(message: StoredMessage): (RecordPosition & { head: Uint8Array; sig: Uint8Array }) | undefined {
  const position = headerPosition(message.headers?.get(FILE_HEADER), message.headers?.get(SEQ_HEADER))
  const head = fromBase64Url(message.headers?.get(HEAD_HEADER) ?? '')
  const sig = fromBase64Url(message.headers?.get(HEAD_SIG_HEADER) ?? '')
  return position && head?.length === 32 && sig?.length === 64 ? { ...position, head, sig } : undefined
}
