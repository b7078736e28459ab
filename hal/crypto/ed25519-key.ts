import { createPublicKey, type KeyObject } from 'node:crypto'
import { subjectPublicKeyInfo } from '../x509/der.js'
import { CURVES } from './curves.js'

/** A node:crypto key from the 32 raw bytes an Ed25519 public key travels as (`fwk`, the log key). */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  const { size, oids } = CURVES.ED25519
  if (raw.length !== size) throw new RangeError(`an Ed25519 public key is ${size} bytes`)
  return createPublicKey({ key: Buffer.from(subjectPublicKeyInfo(oids, raw)), format: 'der', type: 'spki' })
}
