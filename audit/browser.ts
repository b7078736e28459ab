// audit/'s face free of node: the journal's timeline in words and the signed head's check, which
// the management app shares with hem-audit.
export { foldLogins, type TimelineLine } from './fold-logins.js'
export { headClaim, SignedHeadError } from './signed-head.js'
export {
  eventWho,
  FAILED_LOGIN_WHO,
  isFailedLogin,
  timeline,
  whoWord,
  type TimelineEvent,
  type TimelineRecord,
} from './timeline.js'
