// Follows the journal as it is written, record by record, reading the segment files (never a
// queue in memory) and handing out only what is durably stored: a record a failed write left in
// the file for a moment, or that a crash may still take back, must never leave the device.

import { bytesEqual, chainStart, chainStep, parseLine } from '../../eventstore/index.js'
import type { RecordLine } from '../../protocol/index.js'
import type { JournalMedia } from '../../hal/index.js'

/** What the tail reads: the segment files, and how far the file being written is durable. */
export interface DurableJournal {
  media: Pick<JournalMedia, 'list' | 'readRange'>
  /**
   * The file being written and the chain head over what of it is durably stored, read together.
   * Every older file is complete: the writer moved on only after it stored all of it.
   */
  durable(): { file: string; head: Uint8Array }
}

export interface RecordPosition {
  file: string
  seq: number
}

/** One record as stored: its line and the lines before it that are no record (the file's banner). */
export interface TailRecord extends RecordPosition {
  bytes: Uint8Array
  record: RecordLine
  /** The file's chain head after the record's line: what a signed head of this record signs. */
  head: Uint8Array
}

/** A segment holds a line longer than any record can be: it is no journal the tail can follow. */
export class JournalTailError extends Error {
  override readonly name = 'JournalTailError'
}

/** Lines are at most ~17 KiB (16 KiB of data, a subject, a MAC): a chunk always holds one. */
const CHUNK = 64 * 1024
const NEWLINE = 0x0a
const utf8 = new TextDecoder('utf-8', { fatal: true })

export class JournalTail {
  private file: string | undefined
  private offset = 0
  private chain: Uint8Array = new Uint8Array(0)
  /** Lines read that are no record, waiting for the record they precede. */
  private prefix: Uint8Array[] = []
  private ready: TailRecord[] = []

  /** Starts at record `from` (included), or at the oldest file; a missing `from` file means the next one. */
  constructor(
    private readonly source: DurableJournal,
    private readonly from?: RecordPosition,
  ) {}

  /** The next durable record, or undefined when everything durable so far was handed out. */
  async next(): Promise<TailRecord | undefined> {
    while (this.ready.length === 0) if (!(await this.read())) return undefined
    return this.ready.shift()
  }

  /** Reads one chunk; false when there is nothing durable to read now. */
  private async read(): Promise<boolean> {
    const { file: current, head } = this.source.durable()
    if (this.file === undefined) return this.moveTo(this.from ? (id) => id >= this.from!.file : () => true, current)
    if (this.file === current && bytesEqual(this.chain, head)) return false
    const chunk = await this.source.media.readRange(this.file, this.offset, CHUNK)
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      const line = chunk.slice(start, end + 1)
      start = end + 1
      this.take(line)
      // Past the durable head of the file being written, lines may still be taken back.
      if (this.file === current && bytesEqual(this.chain, head)) return true
    }
    if (start > 0) return true
    if (chunk.length === CHUNK)
      throw new JournalTailError(
        `journal file ${this.file} has a line longer than ${CHUNK} bytes at byte ${this.offset}`,
      )
    // The end of a complete file (bytes after its last newline, if any, are no line): on to the next.
    const done = this.file
    return this.file === current ? false : this.moveTo((id) => id > done, current)
  }

  private async moveTo(accept: (id: string) => boolean, current: string): Promise<boolean> {
    const next = (await this.source.media.list()).find((id) => accept(id) && id <= current)
    if (next === undefined) return false
    this.file = next
    this.offset = 0
    this.chain = chainStart(next)
    this.prefix = []
    return true
  }

  private take(line: Uint8Array): void {
    this.chain = chainStep(this.chain, line)
    this.offset += line.length
    const record = recordOf(line)
    if (!record) {
      this.prefix.push(line)
      return
    }
    const bytes = this.prefix.length === 0 ? line : Buffer.concat([...this.prefix, line])
    this.prefix = []
    if (this.from && this.file === this.from.file && record.seq < this.from.seq) return
    this.ready.push({ file: this.file!, seq: record.seq, bytes: new Uint8Array(bytes), record, head: this.chain })
  }
}

/**
 * The record a line holds; undefined for a comment, and for a line that does not parse (it travels with the next
 * record, as stored).
 */
function recordOf(line: Uint8Array): RecordLine | undefined {
  if (line[0] === 0x23) return undefined
  let text: string
  try {
    text = utf8.decode(line.subarray(0, line.length - 1))
  } catch {
    return undefined
  }
  const parsed = parseLine(text)
  return parsed.ok ? parsed.record : undefined
}
