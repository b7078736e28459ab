// The enclave's anchor against the files: a journal that no longer reaches the last seal the
// enclave saw was cut at its end (its newest records or its newest file removed).

import type { JournalAnchor, JournalMedia } from '../hal/index.js'
import { bytesEqual } from './bytes-equal.js'
import { headAfter } from './head-after.js'
import { nodeJournalCrypto } from './node-journal-crypto.js'

/** What the journal keeps its anchor in: the enclave. */
export interface JournalAnchorStore {
  journalAnchor(): Promise<JournalAnchor | undefined>
  setJournalAnchor(anchor: JournalAnchor): Promise<void>
}

/** Why the files do not reach `anchor`, or undefined when they do. */
export async function anchorProblem(media: JournalMedia, anchor: JournalAnchor): Promise<string | undefined> {
  const where = `${anchor.file}:seq ${anchor.seq.toString(16)}`
  const cut = 'the journal was cut at its end'
  if (!(await media.list()).includes(anchor.file))
    return `file ${anchor.file} is missing, but the enclave saw it sealed up to ${where}: ${cut}`
  const head = headAfter(anchor.file, await media.read(anchor.file), anchor.seq, nodeJournalCrypto)
  if (!head) return `file ${anchor.file} has no record ${where}, which the enclave saw sealed: ${cut}`
  if (!bytesEqual(head, anchor.head))
    return `the chain head after ${where} is not the one the enclave saw sealed: the journal was cut and rewritten`
  return undefined
}
