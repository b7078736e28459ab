// The public face of audit/: the auditors' tools over the journal, offline with only the log public key.

export { verifyClientStyle } from './verify-client-style.js'
export { readAuditJournal, type AuditJournal, type AuditRecord } from './audit-journal.js'
export { replayDevice, type DeviceReplay, type ReplayOptions } from './device-replay.js'
export { parseReplayPoint, parseTime, formatReplayPoint, ReplayPointError, type ReplayPoint } from './replay-point.js'
export type { KeyMetadata } from './key-catalogue.js'
export { timeline, formatTimelineEvent, type TimelineEvent, type TimelineFilter, type Fact } from './timeline.js'
export { FetchJournalError, fetchJournal, fetchLogFiles, fetchLogKey } from './fetch-journal.js'
export { headClaim, parseSignedHead, SignedHeadError } from './signed-head.js'
