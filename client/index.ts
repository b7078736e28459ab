// The client library (`hemd/client`): the whole device API for a program, and the pieces of a login
// for a program that logs in itself.
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
export { buildInitEjwt, buildLoginEjwt, passphraseChangeHmac, type LoginChallenge } from './ejwt-builder.js'
export { derivePassphraseKeyAsync, type PassphraseKey } from './passphrase-key.js'
export { wrapTlsKey } from './tls-key-wrap.js'
