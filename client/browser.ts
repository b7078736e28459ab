// client/'s face free of node: what the management app (webroot/) shares with hemctl: base64, the
// login, the personalisation and the passphrase key, the crypto calls on a key, the TLS key's wrap, the typed
// errors, the API's answer types, and the external authenticator's calls on the device and the broker.
export { fromBase64, toBase64, toBase64Url } from './base64.js'
export * as cryptoCalls from './crypto-calls.js'
export { CryptoInputError, LIMITS, SIGN_ALGS, WRAP_ALGS } from './crypto-input.js'
export { buildLoginEjwt, passphraseChangeHmac, type LoginChallenge } from './ejwt-builder.js'
export {
  ConflictError,
  DeviceRefusedError,
  DeviceUnreachableError,
  NotAcceptableError,
  refusal,
  UnauthorizedError,
  UnexpectedAnswerError,
} from './errors.js'
export {
  BACKUP_SCOPE,
  backupFilename,
  backupPassphraseProblem,
  RESTORE_FILENAME,
  restore,
  setBackupPassphrase,
  type Restored,
} from './backup-calls.js'
export { derivePassphraseKeyAsync, type PassphraseKey } from './passphrase-key.js'
export { allKeys } from './key-list-calls.js'
export { personalise, type InitKeys } from './personalise.js'
export { wrapTlsKeyWebCrypto } from './tls-key-wrap.js'
export type { CipherAlg, Digest, KeyDetails, KeyEntry, KeyList, Personalised, SignAlg, WrapAlg } from './types.js'
export {
  BrokerClient,
  type ApprovalEvent,
  type BrokerClientOptions,
  type BrokerSession,
  type DeviceBrokerSession,
  type DeviceProof,
  type EventState,
  type Registration,
  type RegistrationState,
  type Subscriber,
} from './broker-client.js'
export { BrokerRefusedError, BrokerUnreachableError, printable, UnexpectedBrokerAnswerError } from './broker-errors.js'
export { pairingQrPayload } from './pairing-qr-payload.js'
export type { DeviceJson, JsonInput } from './device-json.js'
export {
  EXT_PAIR_SCOPE,
  extInit,
  ExtInputError,
  extMac,
  extRequest,
  extToken,
  extValidate,
  pairingIdentity,
  pairings,
  type ExtMac,
  type Pairing,
  type PairingIdentity,
} from './ext-auth-calls.js'
export { deviceProof } from './device-proof.js'
