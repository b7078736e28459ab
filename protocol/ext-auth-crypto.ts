import { x25519 } from '@noble/curves/ed25519.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'

/** An X25519 key of the wrong length, or a peer key whose shared secret is all zeros (a point of small order). */
export class ExtAuthKeyError extends Error {
  override readonly name = 'ExtAuthKeyError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

const utf8 = new TextEncoder()

/** HMAC-SHA256; a string message is its UTF-8 bytes. */
export function hmacSha256(key: Uint8Array, message: Uint8Array | string): Uint8Array {
  return hmac(sha256, key, typeof message === 'string' ? utf8.encode(message) : message)
}

/** Equal bytes, in time that depends on the lengths only. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}

function checkLength(key: Uint8Array, what: string): void {
  if (!(key instanceof Uint8Array) || key.length !== 32) throw new ExtAuthKeyError(`the ${what} is not 32 bytes`)
}

/** X25519 (RFC 7748); refuses an all-zero output wherever one is computed (contract §2.2). */
export function x25519Agree(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  checkLength(privateKey, 'private key')
  checkLength(publicKey, 'public key')
  let shared: Uint8Array
  try {
    shared = x25519.getSharedSecret(privateKey, publicKey)
  } catch (err) {
    throw new ExtAuthKeyError('the peer key gives no shared secret', { cause: err })
  }
  if (shared.every((byte) => byte === 0)) throw new ExtAuthKeyError('the peer key gives an all-zero shared secret')
  return shared
}

export function x25519PublicKey(privateKey: Uint8Array): Uint8Array {
  checkLength(privateKey, 'private key')
  return x25519.getPublicKey(privateKey)
}

/** The private scalar X25519 uses for 32 random bytes: RFC 7748's clamping, as the family's app stores it. */
export function x25519Clamp(seed: Uint8Array): Uint8Array {
  checkLength(seed, 'seed')
  const key = Uint8Array.from(seed)
  key[0]! &= 248
  key[31]! &= 127
  key[31]! |= 64
  return key
}

/** The Unix time a timed nonce or a device `jti` was made at: its first 4 bytes, little-endian. */
export function nonceTime(nonce: Uint8Array): number {
  if (nonce.length < 4) throw new RangeError('a timed nonce has at least 4 bytes')
  return new DataView(nonce.buffer, nonce.byteOffset, 4).getUint32(0, true)
}
