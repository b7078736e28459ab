// The enclave's anchor against the files: a journal that no longer reaches the last seal the
// enclave saw was cut at its end (its newest records or its newest file removed).

import type { JournalAnchor, JournalMedia } from '../hal/index.js'
import { bytesEqual } from './bytes-equal.js'
import { headAfter } from './head-after.js'
import { nodeJournalCrypto } from './node-journal-crypto.js'
import type { SegmentCheck } from './segment-check.js'

/** What the journal keeps its anchor in: the enclave. */
export interface JournalAnchorStore {
  journalAnchor(): Promise<JournalAnchor | undefined>
  setJournalAnchor(anchor: JournalAnchor): Promise<void>
}

/** A file as recovery checked it, before it wrote anything. */
export interface CheckedFile {
  id: string
  bytes: Uint8Array
  check: Readonly<SegmentCheck>
}

/**
 * Why the files do not reach `anchor`, or undefined when they do. `checked`, the newest file as
 * recovery found it, is not read or chained again (the anchor is in it but after a crash).
 */
export async function anchorProblem(
  media: JournalMedia,
  anchor: JournalAnchor,
  checked?: CheckedFile,
): Promise<string | undefined> {
  const where = `${anchor.file}:seq ${anchor.seq.toString(16)}`
  const cut = 'the journal was cut at its end'
  if (!(await media.list()).includes(anchor.file))
    return `file ${anchor.file} is missing, but the enclave saw it sealed up to ${where}: ${cut}`
  const head =
    checked?.id === anchor.file
      ? checkedHeadAfter(checked, anchor.seq)
      : headAfter(anchor.file, await media.read(anchor.file), anchor.seq, nodeJournalCrypto)
  if (!head) return `file ${anchor.file} has no record ${where}, which the enclave saw sealed: ${cut}`
  if (!bytesEqual(head, anchor.head))
    return `the chain head after ${where} is not the one the enclave saw sealed: the journal was cut and rewritten`
  return undefined
}

/** A file without problems has each seq once: a seal's head is the head after that seq. */
function checkedHeadAfter({ id, bytes, check }: CheckedFile, seq: number): Uint8Array | undefined {
  const sealed = check.problems.length === 0 ? check.sealHeads.get(seq) : undefined
  return sealed ?? headAfter(id, bytes, seq, nodeJournalCrypto)
}
