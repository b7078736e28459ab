/** A pairing the authenticator will not make: a bad QR payload or link, or a request failing a check of §4.1. */
export class PairingError extends Error {
  override readonly name = 'PairingError'
}
