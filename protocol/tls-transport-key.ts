import { createHash } from 'node:crypto'

/**
 * The AES-256-CBC key that wraps an imported TLS private key: SHA-256 of the X25519 shared
 * secret of `emp` and the device identity key (`eid`). Hashed because a raw X25519 output
 * is not uniformly random.
 */
export function tlsTransportKey(sharedSecret: Uint8Array): Buffer {
  return createHash('sha256').update(sharedSecret).digest()
}
