// protocol/'s face free of node: what the management app (webroot/) uses, and what the code it
// shares with the device (the journal check, the image header, the client's login) takes from here.
export { CONFIG_FIELD_RULES, STORAGE_MODES, type ConfigRuleField } from './config-field-rules.js'
export type { Variant } from './device.js'
export type { SelfTestAnswer } from './diag.js'
export { FLS } from './fail-state.js'
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
export { wrapTlsKeyBytes, type WrappedTlsKey } from './tls-key-wrap.js'
