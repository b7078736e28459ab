// The public face of eventstore: the journal writer, the verifier, and the readers the audit tools
// build on (replay, timeline).

export * from '../protocol/journal.js'
export { Journal } from './journal.js'
export type { JournalLogger, JournalOptions } from './journal-options.js'
export { verifyJournal, type VerifyOptions } from './verify-journal.js'
export { type JournalFile } from '../protocol/journal.js'
export { parseLine, type ParsedLine } from './record-line.js'
export { readLines } from './read-lines.js'
export { decodeRecordData } from './record-data.js'
export { parseLinkData, parseSealData } from './extension-data.js'
export { formatProblem } from './format-problem.js'
export { fromBase64Url, toBase64Url } from './base64url.js'
export { MAX_DATA_CHARS, MAX_SUBJECT_CHARS } from './encode-entry.js'
export { readHistory, type HistoryRecord, type JournalHistory } from './journal-history.js'
export { JournalClosedError, JournalReplayError, JournalWriteError, TamperedJournalError } from './errors.js'
export { journalLayout, type BootSpan, type BootEnd, type JournalGap, type JournalLayout } from './journal-layout.js'
export { logTypeName, logTypePhrase, parseLogType } from '../protocol/log-type-names.js'
