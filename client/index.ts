// The client library (`hemd/client`): the whole device API for a program, and the pieces of a login.
export { HemClient, type HemClientOptions } from './hem-client.js'
export {
  BadRequestError,
  ConflictError,
  DeviceFailedError,
  DeviceRefusedError,
  DeviceUnreachableError,
  FingerprintMismatchError,
  ForbiddenError,
  NotAcceptableError,
  NotFoundError,
  PayloadError,
  StorageFullError,
  UnauthorizedError,
  UnavailableError,
  UnexpectedAnswerError,
} from './errors.js'
export { CryptoInputError, SIGN_ALGS, WRAP_ALGS } from './crypto-input.js'
export { PinStore, defaultConfigDir } from './pin-store.js'
export { Transport, type Exchange, type RequestInput, type TransportOptions } from './transport.js'
export type * from './types.js'
export {
  EJWT_HEADER,
  buildEjwt,
  buildInitEjwt,
  buildLoginEjwt,
  passphraseChangeHmac,
  type EjwtInput,
  type LoginChallenge,
} from './ejwt-builder.js'
export {
  PBKDF2_ITERATIONS,
  derivePassphraseKeyAsync,
  passphraseKeyFromSeed,
  type PassphraseKey,
} from './passphrase-key.js'
export { PassphraseKeyCache, derivePassphraseKey, type PassphraseKeyCacheOptions } from './passphrase-key-node.js'
export { wrapTlsKey } from './tls-key-wrap.js'
export type { CipherAlg, EncryptInput, KeyEntry, KeySpec, UpgradeKind } from './types.js'
