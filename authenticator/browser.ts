// authenticator/'s face free of node: the protocol core of contract §4, for the CLI and the web page alike.
export type { AgreedKey, AidKey, KeyProvider, NewAidKey, ScopeCipher } from './aid-key.js'
export { buildAuthreply, grantedScope, isPeriod, openEvent, readEventData } from './approval.js'
export type { ApprovalKeys, EventData, OpenedEvent, Period } from './approval.js'
export {
  Authenticator,
  type Approval,
  type AuthenticatorOptions,
  type PairingOffer,
  type PendingEvent,
} from './authenticator.js'
export { BrokerAnswerError } from './broker-answer-error.js'
export { BrokerClient, fetchTransport, parseJson, type HttpAnswer, type HttpTransport } from './broker-client.js'
export { pushTokenBody, unpairBody, type AppProofInput } from './broker-proofs.js'
export { IndexedDbPairingStore, PairingDatabaseError, type IdbFactory } from './indexed-db-pairing-store.js'
export { NobleKeys } from './noble-keys.js'
export { openWebAuthenticator, type WebAuthenticatorOptions } from './open-web-authenticator.js'
export { PairingError } from './pairing-error.js'
export { parsePairingInvite, type PairingInvite } from './pairing-invite.js'
export { buildPairingReply, type PairingReply } from './pairing-reply.js'
export { HASH_NOT_IMPLEMENTED, readPairingRequest, type PairingRequest } from './pairing-request.js'
export {
  MemoryPairingStore,
  type PairingRecord,
  type PairingStore,
  type Sealer,
  type StoredPairing,
} from './pairing-store.js'
export { WebCryptoKeys, type WebCryptoKey } from './webcrypto-keys.js'
