// The public face of eventstore: the journal writer, the verifier, and readers for later tools.

export * from './types.js'
export { Journal } from './journal.js'
export { JournalClosedError, JournalWriteError } from './errors.js'
export { verifyJournal, type JournalFile, type VerifyOptions } from './verify-journal.js'
export { verifyClientStyle } from './verify-client-style.js'
export { parseLine, type ParsedLine } from './record-line.js'
export { readLines } from './read-lines.js'
export { decodeRecordData } from './record-data.js'
export { parseLinkData, parseSealData } from './extension-data.js'
export { formatProblem } from './format-problem.js'
export { fromBase64Url, toBase64Url } from './base64url.js'
export { MAX_DATA_CHARS, MAX_SUBJECT_CHARS } from './encode-entry.js'
