// The journal's anchor as the sim keeps it: one small file of the enclave's directory, replaced
// whole and signed with the device's log key over the device id, so that an anchor copied from
// another device, or edited, is refused. A real enclave keeps it in a monotonic counter that nothing
// outside it can move back; the sim's file can be deleted or put back, which the journal's rules
// (eventstore/journal-anchor.ts) and the fleet mirror catch as far as a simulated device can.

import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { JournalAnchorError } from '../errors.js'
import type { JournalAnchor } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { readOptionalEnclaveFile } from './enclave-files.js'

const FILE_ID = /^[0-9a-f]{8}$/
const HEAD = /^[A-Za-z0-9+/]{43}=$/
const SIG = /^[A-Za-z0-9+/]{86}==$/

interface StoredAnchor {
  anchor: JournalAnchor
  sig: Uint8Array
}

export class JournalAnchorFile {
  readonly #logKey: KeyObject
  readonly #verifyKey: KeyObject

  constructor(
    private readonly path: string,
    private readonly devid: string,
    logKey: KeyObject,
  ) {
    this.#logKey = logKey
    this.#verifyKey = createPublicKey(logKey)
  }

  async read(): Promise<JournalAnchor | undefined> {
    const stored = await readOptionalEnclaveFile(this.path, parseAnchor)
    if (!stored) return undefined
    if (!verify(null, anchorMessage(this.devid, stored.anchor), this.#verifyKey, stored.sig))
      throw new JournalAnchorError(
        "the journal anchor was not made by this device's enclave (another device's, or edited)",
      )
    return stored.anchor
  }

  /** The anchor as builds before signed anchors wrote it (unsigned `{file, seq, head}`), if the file holds that. */
  async readUnsigned(): Promise<JournalAnchor | undefined> {
    return readOptionalEnclaveFile(this.path, (text) => {
      const value = JSON.parse(text) as Record<string, unknown>
      const { file, seq, head } = value
      const exact = Object.keys(value).sort().join() === 'file,head,seq'
      return exact && typeof file === 'string' && FILE_ID.test(file) && isSeq(seq) && isHead(head)
        ? { file, seq, head: bytesOf(head) }
        : undefined
    })
  }

  write(anchor: JournalAnchor): Promise<void> {
    const sig = sign(null, anchorMessage(this.devid, anchor), this.#logKey)
    const { file, seq, head, after } = anchor
    const text = JSON.stringify({
      file,
      seq,
      head: base64(head),
      ...(after ? { after: { seq: after.seq, head: base64(after.head) } } : {}),
      sig: base64(sig),
    })
    // Checked on the way in as on the way out: a bad anchor would read as a tamper at the next boot.
    parseAnchor(text)
    return writeFileAtomic(this.path, `${text}\n`, 0o600)
  }
}

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')

/**
 * What the log key signs: "hemd.anchor.v1" || devid || 0 || file || u32be(seq) || head, then 1 ||
 * u32be(after.seq) || after.head, or 0. Its own domain: no seal, signed head or nonce reads as one.
 */
function anchorMessage(devid: string, anchor: JournalAnchor): Uint8Array {
  const seq = (n: number) => {
    const bytes = Buffer.alloc(4)
    bytes.writeUInt32BE(n)
    return bytes
  }
  const { after } = anchor
  return Buffer.concat([
    Buffer.from(`hemd.anchor.v1${devid}\0${anchor.file}`, 'utf8'),
    seq(anchor.seq),
    anchor.head,
    after ? Buffer.concat([Buffer.from([1]), seq(after.seq), after.head]) : Buffer.from([0]),
  ])
}

function parseAnchor(text: string): StoredAnchor {
  const value = JSON.parse(text) as { file?: unknown; seq?: unknown; head?: unknown; after?: unknown; sig?: unknown }
  const { file, seq, head, after, sig } = value
  if (typeof file !== 'string' || !FILE_ID.test(file) || !isSeq(seq) || !isHead(head))
    throw new JournalAnchorError('the journal anchor is not {file, seq, head, sig}')
  if (typeof sig !== 'string' || !SIG.test(sig)) throw new JournalAnchorError('the journal anchor is not signed')
  const anchor: JournalAnchor = { file, seq, head: bytesOf(head) }
  if (after !== undefined) {
    const { seq: afterSeq, head: afterHead } = (after ?? {}) as { seq?: unknown; head?: unknown }
    if (!isSeq(afterSeq) || afterSeq >= seq || !isHead(afterHead))
      throw new JournalAnchorError("the journal anchor's `after` is not {seq, head} before its seal")
    anchor.after = { seq: afterSeq, head: bytesOf(afterHead) }
  }
  return { anchor, sig: bytesOf(sig) }
}

function isSeq(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 0xffffffff
}

function isHead(value: unknown): value is string {
  return typeof value === 'string' && HEAD.test(value)
}

const bytesOf = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'))
