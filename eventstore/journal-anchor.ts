// The enclave's anchor against the files as the boot finds them. The journal moves the anchor to a
// seal before it writes the seal, and marks it durable after (journal-anchoring.ts), so the files
// always hold the anchor's seal and no seal after it, but for the one write a crash interrupted:
// - a journal that no longer reaches the anchor's seal was cut at its end (records or newest files);
// - a seal after the anchor's means the anchor was put back from an older state;
// - sealed records without any anchor mean the anchor was removed.

import type { JournalAnchor, JournalMedia } from '../hal/index.js'
import { bytesEqual } from './bytes-equal.js'
import { headAfter } from './head-after.js'
import { nodeJournalCrypto } from './node-journal-crypto.js'
import { readRecordLines } from './read-lines.js'
import type { SegmentCheck } from './segment-check.js'
import { LogType } from '../protocol/index.js'

/** What the journal keeps its anchor in: the enclave. */
export interface JournalAnchorStore {
  journalAnchor(): Promise<JournalAnchor | undefined>
  setJournalAnchor(anchor: JournalAnchor): Promise<void>
  /** The unsigned anchor of an older build, if the store holds one (journal-anchoring.ts migrates it). */
  unsignedJournalAnchor?(): Promise<JournalAnchor | undefined>
}

/** A file as recovery checked it, before it wrote anything. */
export interface CheckedFile {
  id: string
  bytes: Uint8Array
  check: Readonly<SegmentCheck>
}

/** The files as the boot found them: every id (but a file torn at its creation, emptied), the newest checked. */
export interface FoundFiles {
  ids: string[]
  tail: CheckedFile | undefined
}

const SEALS: ReadonlySet<number> = new Set([LogType.SEAL])
const hex = (n: number): string => n.toString(16)
const CUT = 'the journal was cut at its end'

/** Why the files do not agree with `anchor` (undefined: the enclave holds none), or undefined when they do. */
export async function anchorProblem(
  media: JournalMedia,
  anchor: JournalAnchor | undefined,
  found: FoundFiles,
): Promise<string | undefined> {
  const files = new FoundBytes(media, found.tail)
  if (!anchor) {
    // Newest first: the newest file is in memory, and an older one would have been sealed when the next began.
    for (const id of [...found.ids].reverse()) {
      const seal = await files.sealAfter(id, -1)
      if (seal !== undefined)
        return `${id}:seq ${hex(seal)} is a seal, but the enclave holds no journal anchor: the anchor was removed`
    }
    return undefined
  }
  const where = `${anchor.file}:seq ${hex(anchor.seq)}`
  if (!found.ids.includes(anchor.file))
    return `file ${anchor.file} is missing, but the enclave saw it sealed up to ${where}: ${CUT}`
  const newer = found.ids.filter((id) => id > anchor.file)
  const head = await files.headAfter(anchor.file, anchor.seq)
  if (head && bytesEqual(head, anchor.head)) {
    for (const [id, from] of [[anchor.file, anchor.seq], ...newer.map((id) => [id, -1] as const)] as const) {
      const seal = await files.sealAfter(id, from)
      if (seal !== undefined)
        return (
          `${id}:seq ${hex(seal)} is a seal after the enclave's anchor at ${where}: ` +
          'the anchor was put back from an older state'
        )
    }
    return undefined
  }
  // The anchor moved ahead of a seal whose write did not complete: the file ends as it was before it.
  const { after } = anchor
  if (after && newer.length === 0) {
    const before = await files.headAfter(anchor.file, after.seq)
    if (before && bytesEqual(before, after.head) && (await files.sealAfter(anchor.file, after.seq)) === undefined)
      return undefined
  }
  if (!head) return `file ${anchor.file} has no record ${where}, which the enclave saw sealed: ${CUT}`
  return `the chain head after ${where} is not the one the enclave saw sealed: the journal was cut and rewritten`
}

/** The files' bytes, each read once; the newest as recovery checked it (the anchor is in it, but after a crash). */
class FoundBytes {
  private readonly read = new Map<string, Promise<Uint8Array>>()

  constructor(
    private readonly media: JournalMedia,
    private readonly tail: CheckedFile | undefined,
  ) {}

  async headAfter(id: string, seq: number): Promise<Uint8Array | undefined> {
    // A file without problems has each seq once: a seal's head is the head after that seq.
    const sealed = this.tailCheck(id)?.sealHeads.get(seq)
    return sealed ?? headAfter(id, await this.bytes(id), seq, nodeJournalCrypto)
  }

  /** The seq of the first seal after `seq` in file `id`, if there is one. */
  async sealAfter(id: string, seq: number): Promise<number | undefined> {
    const check = this.tailCheck(id)
    if (check) return [...check.sealHeads.keys()].find((sealSeq) => sealSeq > seq)
    for (const { record } of readRecordLines(await this.bytes(id), SEALS)) if (record.seq > seq) return record.seq
    return undefined
  }

  private tailCheck(id: string): Readonly<SegmentCheck> | undefined {
    const tail = this.tail
    return tail?.id === id && tail.check.problems.length === 0 ? tail.check : undefined
  }

  private bytes(id: string): Promise<Uint8Array> {
    if (this.tail?.id === id) return Promise.resolve(this.tail.bytes)
    let bytes = this.read.get(id)
    if (!bytes) this.read.set(id, (bytes = this.media.read(id)))
    return bytes
  }
}
