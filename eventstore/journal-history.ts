import type { JournalMedia } from '../hal/index.js'
import { prefetchedChecks } from './checked-segments.js'
import { readLines, readRecordLines } from './read-lines.js'
import { decodeRecordData } from './record-data.js'
import { type JournalFile, type RecordLine, type VerifyProblem } from '../protocol/index.js'
import { verifyJournal } from './verify-journal.js'

export interface HistoryRecord extends RecordLine {
  file: string
  decoded: Record<string, unknown> | undefined
}

export interface JournalHistory {
  /**
   * The verified records in order, read from the files each time they are iterated: a long
   * journal held as objects would fill most of a device's heap (100 000 records took about
   * 100 MB) and the collector's time with it, for a fold that looks at each record once.
   */
  records: Iterable<HistoryRecord>
  /** False when any file failed verification; `records` then stop before the first bad file. */
  intact: boolean
  problems: VerifyProblem[]
}

/**
 * Everything the journal holds, verified (MACs, chain, seals, links) so that a replay never
 * folds a record an attacker could have written; with `types`, only the records of those types.
 * The newest file may be open.
 */
export async function readHistory(
  media: JournalMedia,
  publicKey: Uint8Array,
  types?: ReadonlySet<number>,
): Promise<JournalHistory> {
  const files = await Promise.all((await media.list()).map(async (id) => ({ id, bytes: await media.read(id) })))
  // Files the journal's recovery had checked in the background are then remembered checks.
  await prefetchedChecks()
  const result = verifyJournal(files, publicKey, { allowOpenTail: true, trustOpenTail: true, allowMissingStart: true })
  const firstBad = result.problems[0]
  // A chain is only vouched for by its next seal, so nothing of a bad file is trusted.
  const trusted = firstBad ? files.filter((file) => file.id < firstBad.file) : files
  return {
    records: { [Symbol.iterator]: () => recordsOf(trusted, types) },
    intact: result.ok,
    problems: result.problems,
  }
}

function* recordsOf(files: JournalFile[], types: ReadonlySet<number> | undefined): Generator<HistoryRecord> {
  for (const file of files) {
    for (const line of types ? readRecordLines(file.bytes, types) : readLines(file.bytes)) {
      if (line.kind !== 'record') continue
      // Field by field: a spread costs as much as the rest of the record's reading.
      const { seq, time, type, result, subject, data, mac, signed } = line.record
      // Decoded only when a fold asks: most records' data interests none of them.
      let decoded: Record<string, unknown> | undefined | null = null
      yield {
        seq,
        time,
        type,
        result,
        subject,
        data,
        mac,
        signed,
        file: file.id,
        get decoded() {
          if (decoded === null) decoded = decodeRecordData(line.record)
          return decoded
        },
      }
    }
  }
}
