// Writes the records of one segment file. Lines are prepared in a batch against a copy of the
// segment's position (seq, chain head), which moves only once the batch is durably stored.

import type { AppendHandle, Clock, EnclaveSigner, JournalMedia } from '../hal/index.js'
import { toBase64Url } from './base64url.js'
import { chainStart, chainStep } from './chain.js'
import type { EncodedEntry } from './encode-entry.js'
import { formatLine } from './format-line.js'
import { packData } from './pack-data.js'
import { sealMessage } from './seal-message.js'
import { LogType, type LinkData, type SealReason } from '../protocol/index.js'

export interface SegmentDeps {
  signer: EnclaveSigner
  clock: Clock
}

export interface SegmentPosition {
  /** Seq of the next record. */
  seq: number
  head: Uint8Array
  /** Records since the last seal. */
  unsealed: number
}

export interface Batch extends SegmentPosition {
  readonly lines: Uint8Array[]
  bytes: number
  readonly time: number
  /** Ends with a close, rotate or recovered seal. */
  ended: boolean
}

export interface SegmentHeader {
  banner: string
  key: Uint8Array
  link: LinkData
}

export class SegmentWriter {
  private position: SegmentPosition
  private state: 'open' | 'ended' | 'broken' = 'open'
  /** While broken: the size of what is durably and validly stored, which the file must be cut back to. */
  private goodSize = 0

  constructor(
    readonly id: string,
    private readonly handle: AppendHandle,
    private readonly key: Uint8Array,
    position: SegmentPosition,
    private readonly deps: SegmentDeps,
  ) {
    this.position = position
  }

  /** Creates segment `id`: banner, KEY_INIT and LINK in one durable append. */
  static async create(
    media: JournalMedia,
    id: string,
    header: SegmentHeader,
    deps: SegmentDeps,
  ): Promise<SegmentWriter> {
    const handle = await media.open(id)
    try {
      if (handle.size !== 0) throw new Error(`segment ${id} already has content`)
      const writer = new SegmentWriter(id, handle, header.key, { seq: 0, head: chainStart(id), unsealed: 0 }, deps)
      const batch = writer.begin()
      writer.addComment(batch, header.banner)
      writer.addRecord(batch, {
        type: LogType.KEY_INIT,
        result: 0,
        subject: toBase64Url(header.key),
        data: toBase64Url(deps.signer.sign(header.key)),
      })
      writer.addRecord(batch, { type: LogType.LINK, result: 0, subject: '', data: packData({ ...header.link }) })
      await writer.commit(batch)
      return writer
    } catch (err) {
      // The creation error is what matters; a failing close adds nothing.
      await handle.close().catch(() => undefined)
      throw err
    }
  }

  /** False once the file is ended by a seal, or left broken by a write that could not be undone. */
  get writable(): boolean {
    return this.state === 'open'
  }

  /** True while a failed append's bytes may still follow the last good record: nothing may be appended after them. */
  get broken(): boolean {
    return this.state === 'broken'
  }

  get head(): Uint8Array {
    return this.position.head
  }

  get lastSeq(): number {
    return this.position.seq - 1
  }

  get unsealed(): number {
    return this.position.unsealed
  }

  get size(): number {
    return this.handle.size
  }

  begin(): Batch {
    return { ...this.position, lines: [], bytes: 0, time: Math.floor(this.deps.clock.now() / 1000), ended: false }
  }

  addComment(batch: Batch, text: string): void {
    this.push(batch, new Uint8Array(Buffer.from(`${text}\n`, 'utf8')))
  }

  /** Adds a record line; returns its seq. */
  addRecord(batch: Batch, entry: EncodedEntry): number {
    const seq = batch.seq++
    this.push(batch, formatLine({ seq, time: batch.time, ...entry }, this.key))
    batch.unsealed++
    return seq
  }

  /** Seals everything before it: signs the chain head over all lines so far. */
  addSeal(batch: Batch, reason: SealReason): number {
    const seq = batch.seq++
    const head = batch.head
    const sig = this.deps.signer.sign(sealMessage(this.id, seq, head))
    const data = packData({ head, sig, reason })
    this.push(batch, formatLine({ seq, time: batch.time, type: LogType.SEAL, result: 0, subject: '', data }, this.key))
    batch.unsealed = 0
    batch.ended = reason !== 'periodic'
    return seq
  }

  /**
   * Stores the batch durably in one append. A failed append may have left a part of its bytes
   * (a full disk tears it): the file is cut back to its last good size, and when even that fails
   * the writer is broken until `repair` manages it. Seq and chain head move only on success.
   */
  async commit(batch: Batch): Promise<void> {
    if (batch.lines.length === 0) return
    if (this.state !== 'open') throw new Error(`segment ${this.id} is ${this.state}: nothing may be appended`)
    const size = this.handle.size
    try {
      await this.handle.append(Buffer.concat(batch.lines, batch.bytes))
    } catch (err) {
      try {
        await this.handle.truncate(size)
      } catch {
        this.goodSize = size
        this.state = 'broken'
      }
      throw err
    }
    this.position = { seq: batch.seq, head: batch.head, unsealed: batch.unsealed }
    if (batch.ended) this.state = 'ended'
  }

  /** Cuts what a failed append left behind, so that the file may take records again. Throws when it still cannot. */
  async repair(): Promise<void> {
    if (this.state !== 'broken') return
    await this.handle.truncate(this.goodSize)
    this.state = 'open'
  }

  close(): Promise<void> {
    return this.handle.close()
  }

  private push(batch: Batch, line: Uint8Array): void {
    batch.lines.push(line)
    batch.bytes += line.length
    batch.head = chainStep(batch.head, line)
  }
}
