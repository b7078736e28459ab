// X25519 on raw 32-byte keys with node:crypto: noble's first base-point multiplication builds its
// tables (about 0.1 s), which every boot paid for the session key before the device could answer.

import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto'

const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex')
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex')

function privateKeyOf(privateKey: Uint8Array) {
  if (privateKey.length !== 32) throw new RangeError('X25519 keys are 32 bytes')
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519, privateKey]), format: 'der', type: 'pkcs8' })
}

/** The public key of a raw private key (clamped as RFC 7748 says). */
export function x25519PublicKey(privateKey: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyOf(privateKey)).export({ type: 'spki', format: 'der' })
  return new Uint8Array(spki.subarray(SPKI_X25519.length))
}

/** The shared secret; throws for a point of small order (OpenSSL refuses an all-zero secret). */
export function x25519(privateKey: Uint8Array, publicKey: Uint8Array): Buffer {
  if (publicKey.length !== 32) throw new RangeError('X25519 keys are 32 bytes')
  return diffieHellman({
    privateKey: privateKeyOf(privateKey),
    publicKey: createPublicKey({ key: Buffer.concat([SPKI_X25519, publicKey]), format: 'der', type: 'spki' }),
  })
}
