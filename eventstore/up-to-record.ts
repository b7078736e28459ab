import { readLines } from './read-lines.js'
import type { JournalFile } from '../protocol/browser.js'

/**
 * The file as stored up to and including the line of record `seq` (a signed head's record): what
 * a download checks against that head. The file whole when it has no such record: the verifier
 * then names the cut.
 */
export function upToRecord(file: JournalFile, seq: number): JournalFile {
  let end = 0
  for (const line of readLines(file.bytes)) {
    end += line.bytes.length
    if (line.kind === 'record' && line.record.seq === seq) return { id: file.id, bytes: file.bytes.subarray(0, end) }
  }
  return file
}
