// eventstore/'s face free of node: the journal's readers and its check, which take their hashes
// and signatures from the caller (journal-crypto.ts), so that the management app verifies a journal
// with the same code as hemd and hem-audit.
export { checkJournal, type VerifyOptions } from './check-journal.js'
export { parseLinkData, parseSealData, parseTransitionData } from './extension-data.js'
export { fromBase64Url } from './from-base64url.js'
export type { JournalCrypto } from './journal-crypto.js'
export { readLines } from './read-lines.js'
export { decodeRecordData } from './record-data.js'
export { parseLine } from './record-line.js'
export { checkSegment, type SegmentCheck } from './segment-check.js'
export type { HeadClaim } from './signed-heads.js'
export { upToRecord } from './up-to-record.js'
