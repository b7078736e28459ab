import { createPublicKey, type KeyObject } from 'node:crypto'

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** A node:crypto key from the 32 raw bytes an Ed25519 public key travels as (`fwk`, the log key). */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new RangeError('an Ed25519 public key is 32 bytes')
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' })
}
