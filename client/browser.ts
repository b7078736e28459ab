// client/'s face free of node: what the management app (webroot/) shares with hemctl: base64, the
// login and the passphrase key, the TLS key's wrap, the typed errors and the API's answer types.
export { fromBase64, toBase64, toBase64Url } from './base64.js'
export { buildLoginEjwt, passphraseChangeHmac, type LoginChallenge } from './ejwt-builder.js'
export {
  ConflictError,
  DeviceRefusedError,
  DeviceUnreachableError,
  NotAcceptableError,
  refusal,
  UnauthorizedError,
} from './errors.js'
export { derivePassphraseKeyAsync, type PassphraseKey } from './passphrase-key.js'
export { wrapTlsKey } from './tls-key-wrap.js'
export type { KeyDetails, KeyEntry, KeyList } from './types.js'
