import type { JournalMedia } from '../hal/types.js'
import { readLines } from './read-lines.js'
import { decodeRecordData } from './record-data.js'
import type { RecordLine, VerifyProblem } from './types.js'
import { verifyJournal } from './verify-journal.js'

export interface HistoryRecord extends RecordLine {
  file: string
  decoded: Record<string, unknown> | undefined
}

export interface JournalHistory {
  records: HistoryRecord[]
  /** False when any file failed verification; `records` then stop before the first bad file. */
  intact: boolean
  problems: VerifyProblem[]
}

/**
 * Everything the journal holds, verified (MACs, chain, seals, links) so that a replay never
 * folds a record an attacker could have written. The newest file may be open.
 */
export async function readHistory(media: JournalMedia, publicKey: Uint8Array): Promise<JournalHistory> {
  const files = await Promise.all((await media.list()).map(async (id) => ({ id, bytes: await media.read(id) })))
  const result = verifyJournal(files, publicKey, { allowOpenTail: true })
  const firstBad = result.problems[0]
  const records: HistoryRecord[] = []
  for (const file of files) {
    // A chain is only vouched for by its next seal, so nothing of a bad file is trusted.
    if (firstBad && file.id >= firstBad.file) break
    for (const line of readLines(file.bytes)) {
      if (line.kind !== 'record') continue
      records.push({ ...line.record, file: file.id, decoded: decodeRecordData(line.record) })
    }
  }
  return { records, intact: result.ok, problems: result.problems }
}
