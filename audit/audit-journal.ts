// The records of exported journal files, for tools that tell what happened (replay, timeline):
// only ever from files that verify, since a record that does not could have been written by anyone.

import {
  decodeRecordData,
  type HistoryRecord,
  journalLayout,
  type JournalLayout,
  readLines,
  TamperedJournalError,
  verifyJournal,
  type VerifyOptions,
} from '../eventstore/index.js'
import { type JournalFile, type RecordLine, type VerifyResult } from '../protocol/index.js'

export interface AuditRecord extends HistoryRecord {
  /** The boot the record was written in: 1 for the first boot of the set. */
  boot: number
}

export interface AuditJournal {
  /** Every record of every file, in file id then seq order. */
  records: AuditRecord[]
  /** The first line of each file, by id. */
  banners: Map<string, string>
  layout: JournalLayout
  verified: VerifyResult
}

/** Verifies `files` and reads their records; throws TamperedJournalError when they do not verify. */
export function readAuditJournal(
  files: JournalFile[],
  publicKey: Uint8Array,
  options: VerifyOptions = {},
): AuditJournal {
  const verified = verifyJournal(files, publicKey, options)
  if (!verified.ok) throw new TamperedJournalError(verified.problems)
  const layout = journalLayout(files)
  const byId = new Map(files.map((file) => [file.id, file]))
  const records: AuditRecord[] = []
  const banners = new Map<string, string>()
  layout.boots.forEach((span, i) => {
    for (const id of span.files) {
      for (const line of readLines(byId.get(id)!.bytes)) {
        if (line.kind === 'comment' && line.line === 1) banners.set(id, line.text)
        if (line.kind === 'record')
          records.push({ ...line.record, file: id, decoded: decoded(line.record), boot: i + 1 })
      }
    }
  })
  return { records, banners, layout, verified }
}

/** Verified data may still not be a map (a runtime's bug): such a record tells nothing. */
function decoded(record: RecordLine): Record<string, unknown> | undefined {
  try {
    return decodeRecordData(record)
  } catch {
    return undefined
  }
}
