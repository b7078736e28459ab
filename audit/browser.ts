// audit/'s face free of node: the journal's timeline in words and the signed head's check, which
// the management app shares with hem-audit.
export { headClaim, SignedHeadError } from './signed-head.js'
export { timeline, whoWord, type TimelineEvent, type TimelineRecord } from './timeline.js'
