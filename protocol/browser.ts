// protocol/'s face free of node: what the management app (webroot/) uses, and what the code it
// shares with the device (the journal check, the image header, the client's login) takes from here.
export { CONFIG_FIELD_RULES, STORAGE_MODES, usableSectors, type ConfigRuleField } from './config-field-rules.js'
export type { Variant } from './device.js'
export { DEFAULT_HOSTNAME, INIT_FIXED_CHOICES, P_INIT_DEFAULTS } from './personalisation-defaults.js'
export type { SelfTestAnswer } from './diag.js'
export type { MirrorLag, MirrorStatus } from './mirror-status.js'
export { FLS } from './fail-state.js'
export { scopeSatisfies } from './scopes.js'
export {
  LogType,
  type JournalFile,
  type JournalLine,
  type LinkData,
  type LogResultNumber,
  type RecordLine,
  type SealData,
  type SealReason,
  type SignedHead,
  type TransitionData,
  type VerifyProblem,
  type VerifyResult,
  type VerifySummary,
} from './journal.js'
export {
  checkDescr,
  checkLabel,
  digests,
  isDigest,
  isKeyType,
  KeyAttributeError,
  keyTypes,
  normaliseKid,
  type Digest,
  type KeyKind,
  type KeyType,
  type KeyTypeOf,
} from './key-types.js'
export { logTypeName, logTypePhrase } from './log-type-names.js'
export { tlsTransportKey } from './tls-transport-key.js'
export { wrapTlsKeyBytes, wrapTlsKeyBytesWebCrypto, type WrappedTlsKey } from './tls-key-wrap.js'
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
  extJwtSigningInput,
  ExtJwtError,
  parseExtJwt,
  signExtJwt,
  type ParsedExtJwt,
} from './ext-jwt.js'
export { joinSealedScope, openScope, scopeKey, sealScope, splitSealedScope } from './scope-seal.js'
export { fromBase64, toBase64, toBase64Url } from './web-base64.js'
export { BackupFormatError, MAX_BACKUP_BYTES, readBackupHeader, type BackupHeader } from './backup-format.js'
