// The public face of protocol/: what other folders may use of it.
export { keyOperationAccess, operationAccess, type OperationAccess } from './access-rules.js'
export {
  EXT_PAIR_OP,
  EXT_PAIRINGS_OP,
  type ExtPairBody,
  type ExtPairing,
  type ExtPairingsAnswer,
} from './ext-pairing-ops.js'
export { base64Field, decodeBase64, encodeBase64 } from './base64.js'
export {
  BEARER_HEADER,
  BearerVerifier,
  type BearerClaims,
  type BearerVerifierOptions,
  type SignatureCheck,
} from './bearer-token.js'
export type { CommandReply, CommandRequest, FaultEvent, Principal, StateEvent } from './bus-messages.js'
export { CHECKIN_REPLY_TYPE, signCheckinReply, type CheckinAction, type CheckinReply } from './checkin.js'
export { decode, encode } from './codec.js'
export { BATCH_LIMITS, type BatchReplyPart, packArray, packReplyPart, withinBatchLimits } from './command-batch.js'
export {
  CONFIG_FIELD_RULES,
  FIXED_AFTER_PERSONALISATION,
  ONLY_ON_P,
  type ConfigFieldRule,
  type ConfigRuleField,
} from './config-field-rules.js'
export { DEFAULT_HOSTNAME, INIT_FIXED_CHOICES, P_INIT_DEFAULTS } from './personalisation-defaults.js'
export { DEADLINE_MS, deadlinePassed, TIMEOUT_ERROR, type DeadlineClass } from './deadlines.js'
export type { DiskCipher, DiskMode, Variant } from './device.js'
export { FAULT_EVENTS, FLS, type FaultEventType } from './fail-state.js'
export { fail } from './fail.js'
export type { IdentityState, TransportConfig } from './identity-state.js'
export {
  LogResult,
  LogType,
  type ClientCheckResult,
  type JournalEntry,
  type JournalFile,
  type JournalLine,
  type JournalPosition,
  type LinkData,
  type LogResultNumber,
  type LogTypeNumber,
  type RecordLine,
  type RecoveryReport,
  type SealData,
  type SealReason,
  type SignedHead,
  type TransitionData,
  type VerifyProblem,
  type VerifyResult,
  type VerifySummary,
} from './journal.js'
export { MIRROR_STATES, type MirrorLag, type MirrorStatus } from './mirror-status.js'
export { keyOperationScopes, type KeyOperation } from './key-scopes.js'
export { anonymousSearchAllowed, parseDescrPattern } from './key-search.js'
export {
  appTypeWord,
  canAgree,
  canSign,
  checkDescr,
  checkLabel,
  digests,
  gotType,
  isAsymmetric,
  isDigest,
  isKeyType,
  isKind,
  KeyAttributeError,
  keyMode,
  keyTypes,
  listedType,
  normaliseKid,
  type Digest,
  type KeyKind,
  type KeyMode,
  type KeyType,
  type KeyTypeOf,
} from './key-types.js'
export type { KeyRecord, KeystoreState, RepoStats } from './keystore-state.js'
export { publicKeyKid } from './public-key-kid.js'
export { logTypeName, logTypePhrase, parseLogType } from './log-type-names.js'
export { ALL_ROLES, authorized, scopeSatisfies, USER_ROLES, type AccessRule, type Role } from './scopes.js'
export type { StorageState } from './storage-state.js'
export { SerialQueue } from './serial-queue.js'
export { Subjects } from './subjects.js'
export type { HealthModel, SystemState, TemperatureRange, VersionModel } from './system-state.js'
export { tlsTransportKey } from './tls-transport-key.js'
export { wrapTlsKeyBytes, wrapTlsKeyBytesWebCrypto, type WrappedTlsKey } from './tls-key-wrap.js'
export type { UpgradeState } from './upgrade-state.js'
export { wholeNumber } from './whole-number.js'
export {
  AUTH_DIAG_OPS,
  DIAG_SUFFIX,
  KEYSTORE_DIAG_OPS,
  SYSTEM_DIAG_OPS,
  VERIFY_RECORDS_OP,
  type KeyLocation,
  type RecordCheck,
  type SelfTestAnswer,
  type SelfTestRepoStats,
} from './diag.js'
export type { AuthreplyClaims, AuthreqClaims, PairingReplyClaims, PairingRequestClaims } from './ext-auth-claims.js'
export {
  ExtAuthKeyError,
  hmacSha256,
  nonceTime,
  sameBytes,
  x25519Agree,
  x25519Clamp,
  x25519PublicKey,
} from './ext-auth-crypto.js'
export {
  AUTHREQ_KEY_USE_LIFETIME,
  AUTHREQ_LIFETIME,
  EXT_AUTH_MAX_PAIRINGS,
  EXT_PERIODS,
  EXTAID,
  extAuthKid,
  extAuthSub,
  fixedBase64,
  keyHintScope,
  PAIRING_REQUEST_LIFETIME,
  pairingDescr,
  pidOfDescr,
  pidOfPidx,
  pidx,
} from './ext-auth-ids.js'
export {
  EXT_JWT_APP_HEADER,
  EXT_JWT_DEVICE_HEADER,
  EXT_JWT_MAX_LENGTH,
  extJwtSigned,
  ExtJwtError,
  parseExtJwt,
  signExtJwt,
  type ParsedExtJwt,
} from './ext-jwt.js'
export { openScope, scopeKey, sealScope } from './scope-seal.js'
export { fromBase64, toBase64, toBase64Url } from './web-base64.js'
export {
  BACKUP_FORMAT_VERSION,
  BACKUP_KDF_SCRYPT,
  BACKUP_MAGIC,
  BACKUP_NONCE_BYTES,
  BACKUP_TAG_BYTES,
  type BackupFileParts,
  BackupFormatError,
  type BackupHead,
  type BackupHeader,
  DEFAULT_SCRYPT,
  encodeBackupHeader,
  MAX_BACKUP_BYTES,
  parseBackupFile,
  readBackupHeader,
  SCRYPT_LIMITS,
  type ScryptParams,
  scryptProblem,
} from './backup-format.js'
export { RESTORED_KEYS_PER_RECORD, restoredKeys, type RestoredKey, type RestoredKeyRow } from './restore-records.js'
export { AUTH_BACKUP_OPS, BACKUP_OPS } from './backup-ops.js'
