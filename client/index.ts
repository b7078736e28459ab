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
export {
  AlreadyPersonalisedError,
  BadBackupError,
  NoBackupPassphraseError,
  NothingStagedError,
  UnsupportedBackupError,
  WeakPassphraseError,
} from './coded-errors.js'
export {
  BACKUP_PASSPHRASE_BYTES,
  BACKUP_SCOPE,
  backupFilename,
  backupPassphraseProblem,
  restore,
  setBackupPassphrase,
  type Restored,
} from './backup-calls.js'
export { createBackup, stageRestore, type Backup, type Received } from './backup-transfer.js'
export { CryptoInputError, SIGN_ALGS, WRAP_ALGS } from './crypto-input.js'
export { PinStore, defaultConfigDir } from './pin-store.js'
export { Transport, type Exchange, type RequestInput, type TransportOptions } from './transport.js'
export type * from './types.js'
export { buildInitEjwt, buildLoginEjwt, passphraseChangeHmac, type LoginChallenge } from './ejwt-builder.js'
export { derivePassphraseKeyAsync, type PassphraseKey } from './passphrase-key.js'
export { wrapTlsKey } from './tls-key-wrap.js'
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
export { fetchTrusting } from './ca-fetch.js'
export {
  EXT_PAIR_SCOPE,
  ExtInputError,
  type ExtInit,
  type ExtMac,
  type ExtRequested,
  type ExtRequestInput,
  type ExtValidated,
  type Pairing,
  type PairingIdentity,
} from './ext-auth-calls.js'
export { deviceProof } from './device-proof.js'
export { pairingQrPayload } from './pairing-qr-payload.js'
