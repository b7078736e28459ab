import { cbc } from '@noble/ciphers/aes.js'
import { hmacSha256, sameBytes } from './ext-auth-crypto.js'
import { fromBase64, toBase64 } from './web-base64.js'

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const TAG = 32

/** K of a jti (contract §2.2): AES key K[0..15], IV K[16..31], MAC key all of K. */
export function scopeKey(sPair: Uint8Array, jti: Uint8Array): Uint8Array {
  return hmacSha256(sPair, jti)
}

/**
 * Scheme "A" (contract §2.5): AES-128-CBC with PKCS#7 of the scope, then HMAC-SHA256 of the unpadded text.
 * The same key and IV serve both directions of one jti: the family's scheme, kept for its clients; a jti is
 * good once on the device.
 */
export function sealScope(text: string, sPair: Uint8Array, jti: Uint8Array): string {
  const k = scopeKey(sPair, jti)
  const plain = utf8.encode(text)
  const ct = cbc(k.subarray(0, 16), k.subarray(16, 32)).encrypt(plain)
  return joinSealedScope(ct, hmacSha256(k, plain))
}

/** The value of scheme "A" for a ciphertext and its tag: `A` + b64(ct ‖ tag). */
export function joinSealedScope(ct: Uint8Array, tag: Uint8Array): string {
  const sealed = new Uint8Array(ct.length + tag.length)
  sealed.set(ct)
  sealed.set(tag, ct.length)
  return `A${toBase64(sealed)}`
}

/**
 * A sealed value's ciphertext and tag, or undefined when its scheme or length is wrong (§2.5: `A`, at least
 * 48 bytes, whole blocks before the 32-byte tag).
 */
export function splitSealedScope(value: unknown): { ct: Uint8Array; tag: Uint8Array } | undefined {
  if (typeof value !== 'string' || !value.startsWith('A')) return undefined
  let sealed: Uint8Array
  try {
    sealed = fromBase64(value.slice(1))
  } catch {
    return undefined
  }
  if (sealed.length < 48 || (sealed.length - TAG) % 16 !== 0) return undefined
  return { ct: sealed.subarray(0, sealed.length - TAG), tag: sealed.subarray(sealed.length - TAG) }
}

/** The scope a sealed value holds, or undefined when anything about it is wrong (scheme, length, padding, tag). */
export function openScope(value: unknown, sPair: Uint8Array, jti: Uint8Array): string | undefined {
  const sealed = splitSealedScope(value)
  if (!sealed) return undefined
  const k = scopeKey(sPair, jti)
  let plain: Uint8Array
  try {
    plain = cbc(k.subarray(0, 16), k.subarray(16, 32)).decrypt(sealed.ct)
  } catch {
    return undefined
  }
  if (!sameBytes(hmacSha256(k, plain), sealed.tag)) return undefined
  try {
    return strictUtf8.decode(plain)
  } catch {
    return undefined
  }
}
