import { sha256 } from '@noble/hashes/sha2.js'

/**
 * The AES-256-CBC key that wraps an imported TLS private key: SHA-256 of the X25519 shared
 * secret of `emp` and the device identity key (`eid`). Hashed because a raw X25519 output
 * is not uniformly random. Pure, so that the management app wraps a key with the same code.
 */
export function tlsTransportKey(sharedSecret: Uint8Array): Uint8Array {
  return sha256(sharedSecret)
}
