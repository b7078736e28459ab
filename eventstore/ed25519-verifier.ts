import { createPublicKey, verify } from 'node:crypto'
import { toBase64Url } from './base64url.js'
import type { Ed25519Verifier } from './journal-crypto.js'

export type { Ed25519Verifier }

/** A verifier for one raw 32-byte Ed25519 public key (node:crypto: the fast path). */
export function ed25519Verifier(publicKey: Uint8Array): Ed25519Verifier {
  if (publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes')
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey) }, format: 'jwk' })
  return (message, signature) => signature.length === 64 && verify(null, message, key, signature)
}
