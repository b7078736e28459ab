// The records of downloaded journal files, as the timeline tells them.
import type { TimelineRecord } from '../../audit/browser.js'
import { readLines, decodeRecordData } from '../../eventstore/browser.js'
import type { JournalFile, RecordLine } from '../../protocol/browser.js'

/** Every record of `files`, in file then seq order. */
export function journalRecords(files: JournalFile[]): TimelineRecord[] {
  const records: TimelineRecord[] = []
  for (const file of files)
    for (const line of readLines(file.bytes))
      if (line.kind === 'record') records.push({ ...line.record, file: file.id, decoded: decoded(line.record) })
  return records
}

/** A verified record's data may still not be a map (a runtime's bug): such a record tells no facts. */
function decoded(record: RecordLine): Record<string, unknown> | undefined {
  try {
    return decodeRecordData(record)
  } catch {
    return undefined
  }
}
