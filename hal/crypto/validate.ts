// Boundary checks shared by both engines, so that both reject exactly the same inputs.
import { CURVES, bytesToBigInt, ECDH_CURVES, ED_ALGORITHMS, ED_CURVES, edVariant, isCurve } from './curves.js'
import type { EcdhCurveInfo, WeierstrassInfo } from './curves.js'
import { CryptoInputError } from './errors.js'
import type { Digest, EcdsaDigest, EdCurve } from './types.js'
import { SEMIBLOCK } from './rfc3394.js'

const AES_KEY_SIZES = [16, 24, 32]
const BLOCK = 16
const GCM_TAG = 16
// The device always uses 16-byte nonces; 12 and 60 must pass so the standard's vectors run.
const GCM_NONCE_MIN = 12
const GCM_NONCE_MAX = 64
// node:crypto refuses HKDF info longer than 1024 bytes; noble would accept it.
const HKDF_INFO_MAX = 1024
const HKDF_LENGTH_MAX = 255 * 32

export function checkBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new CryptoInputError(`${name} must be a Uint8Array`)
}

export function checkLength(value: unknown, name: string, length: number): asserts value is Uint8Array {
  checkBytes(value, name)
  if (value.length !== length) {
    throw new CryptoInputError(`${name} must be ${length} bytes, got ${value.length}`)
  }
}

export function checkAesKey(key: unknown): asserts key is Uint8Array {
  checkBytes(key, 'AES key')
  if (!AES_KEY_SIZES.includes(key.length)) {
    throw new CryptoInputError(`AES key must be 16, 24 or 32 bytes, got ${key.length}`)
  }
}

/** Whole AES blocks; `nonEmpty` for padded ciphertext, which holds at least the padding block. */
export function checkBlocks(data: unknown, name: string, nonEmpty = false): asserts data is Uint8Array {
  checkBytes(data, name)
  if (data.length % BLOCK !== 0 || (nonEmpty && data.length === 0)) {
    const what = nonEmpty ? 'a non-zero multiple of 16 bytes' : 'a multiple of 16 bytes'
    throw new CryptoInputError(`${name} must be ${what}, got ${data.length}`)
  }
}

export function checkIv(iv: unknown): asserts iv is Uint8Array {
  checkLength(iv, 'IV', BLOCK)
}

export function checkGcmNonce(nonce: unknown): asserts nonce is Uint8Array {
  checkBytes(nonce, 'GCM nonce')
  if (nonce.length < GCM_NONCE_MIN || nonce.length > GCM_NONCE_MAX) {
    throw new CryptoInputError(`GCM nonce must be ${GCM_NONCE_MIN} to ${GCM_NONCE_MAX} bytes, got ${nonce.length}`)
  }
}

export function checkGcmTag(tag: unknown): asserts tag is Uint8Array {
  checkLength(tag, 'GCM tag', GCM_TAG)
}

export function checkOptionalBytes(value: unknown, name: string): asserts value is Uint8Array | undefined {
  if (value !== undefined) checkBytes(value, name)
}

export function curveInfo(curve: unknown): EcdhCurveInfo {
  // The value is not echoed: a caller who swapped arguments would be passing a key.
  if (!isCurve(curve)) {
    throw new CryptoInputError(`unknown curve; expected one of ${ECDH_CURVES.join(', ')}`)
  }
  return CURVES[curve]
}

export function checkPrivateKey(info: EcdhCurveInfo, key: unknown): asserts key is Uint8Array {
  checkLength(key, 'private key', info.size)
  if (info.kind === 'weierstrass') {
    const scalar = bytesToBigInt(key)
    if (scalar === 0n || scalar >= info.order) {
      throw new CryptoInputError('private key is not a scalar in [1, n-1]')
    }
  }
}

/**
 * Encoding only; whether the point lies on the curve is each engine's check. OpenSSL would
 * also take SEC1's hybrid form (0x06/0x07), which noble refuses, so it is refused here.
 */
export function checkPublicKey(info: EcdhCurveInfo, key: unknown): asserts key is Uint8Array {
  if (info.kind === 'montgomery') return checkLength(key, 'public key', info.size)
  checkBytes(key, 'public key')
  if (!secPublicKeyEncoded(info, key)) {
    throw new CryptoInputError(
      `public key must be SEC1 compressed (${1 + info.size} bytes, 0x02/0x03) or uncompressed ` +
        `(${1 + 2 * info.size} bytes, 0x04), got ${key.length} bytes`,
    )
  }
}

/** SEC1 compressed or uncompressed, of the curve's size (see checkPublicKey). */
export function secPublicKeyEncoded(info: EcdhCurveInfo, key: Uint8Array): boolean {
  const compressed = (key[0] === 0x02 || key[0] === 0x03) && key.length === 1 + info.size
  const uncompressed = key[0] === 0x04 && key.length === 1 + 2 * info.size
  return compressed || uncompressed
}

/** A SEC curve, for ECDSA: X25519/X448 keys cannot sign. */
export function secCurveInfo(curve: unknown): WeierstrassInfo {
  const info = curveInfo(curve)
  if (info.kind !== 'weierstrass') throw new CryptoInputError('ECDSA needs a SEC curve, not X25519/X448')
  return info
}

const DIGESTS: readonly Digest[] = ['SHA2-256', 'SHA2-384', 'SHA2-512', 'SHA3-256', 'SHA3-384', 'SHA3-512']
export const ECDSA_DIGESTS: readonly EcdsaDigest[] = ['SHA2-256', 'SHA2-384', 'SHA2-512']

export function checkDigest(digest: unknown): asserts digest is Digest {
  checkName(digest, DIGESTS, 'digest')
}

export function checkEcdsaDigest(digest: unknown): asserts digest is EcdsaDigest {
  checkName(digest, ECDSA_DIGESTS, 'ECDSA digest')
}

export function checkEdCurve(curve: unknown): asserts curve is EdCurve {
  checkName(curve, ED_CURVES, 'EdDSA curve')
}

/**
 * The variant and its context, returning the variant's curve. Pure Ed25519 has no context
 * input, so one given to it is ignored (the device ignores `ctx` there, crypto contract §4);
 * Ed25519ctx without a context would be Ed25519 in disguise, which RFC 8032 §5.1 rules out.
 */
export function checkEdAlgorithm(algorithm: unknown, context: unknown): EdCurve {
  checkName(algorithm, ED_ALGORITHMS, 'EdDSA algorithm')
  checkContext(context)
  const variant = edVariant(algorithm)
  if (variant.context === 'required' && context.length === 0) {
    throw new CryptoInputError(`${algorithm} needs a non-empty context`)
  }
  return variant.curve
}

/** RFC 3394 works on 64-bit semiblocks, at least `min` of them (2 of key data, 3 once wrapped). */
export function checkSemiblocks(data: unknown, name: string, min: number): asserts data is Uint8Array {
  checkBytes(data, name)
  if (data.length % SEMIBLOCK !== 0 || data.length < min * SEMIBLOCK) {
    throw new CryptoInputError(`${name} must be a multiple of 8 bytes, at least ${min * SEMIBLOCK}, got ${data.length}`)
  }
}

export function checkKeyWrapIv(iv: unknown): asserts iv is Uint8Array | undefined {
  if (iv !== undefined) checkLength(iv, 'key wrap IV', SEMIBLOCK)
}

export function checkHkdf(ikm: unknown, salt: unknown, info: unknown, length: unknown): void {
  checkBytes(ikm, 'HKDF ikm')
  checkOptionalBytes(salt, 'HKDF salt')
  checkBytes(info, 'HKDF info')
  if (info.length > HKDF_INFO_MAX) {
    throw new CryptoInputError(`HKDF info must be at most ${HKDF_INFO_MAX} bytes, got ${info.length}`)
  }
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 1 || length > HKDF_LENGTH_MAX) {
    throw new CryptoInputError(`HKDF length must be an integer from 1 to ${HKDF_LENGTH_MAX}`)
  }
}

/** RFC 8032 and FIPS 204 carry the context's length in one byte. */
const CONTEXT_MAX = 255

export function checkContext(context: unknown): asserts context is Uint8Array {
  checkBytes(context, 'context')
  if (context.length > CONTEXT_MAX) {
    throw new CryptoInputError(`context must be at most ${CONTEXT_MAX} bytes, got ${context.length}`)
  }
}

/** `n` bytes from `random`, checked: a source that answers anything else is refused, not trusted. */
function drawBytes(random: unknown, n: number): Uint8Array {
  if (typeof random !== 'function') throw new CryptoInputError('random must be a function')
  const bytes: unknown = random(n)
  if (!(bytes instanceof Uint8Array) || bytes.length !== n) {
    throw new CryptoInputError(`random source must return ${n} bytes`)
  }
  return bytes
}

/**
 * `n` bytes from `random` in an array of our own (the source's could be a view into memory it
 * reuses), the source's wiped: the caller wipes the copy, and no second copy is left behind.
 */
export function drawOwnedBytes(random: unknown, n: number): Uint8Array {
  const drawn = drawBytes(random, n)
  const owned = Uint8Array.from(drawn)
  drawn.fill(0)
  return owned
}

/** A value of a closed set of names; the value is not echoed (a swapped argument could be a key). */
export function checkName<T extends string>(value: unknown, names: readonly T[], what: string): asserts value is T {
  if (typeof value !== 'string' || !(names as readonly string[]).includes(value)) {
    throw new CryptoInputError(`unknown ${what}; expected one of ${names.join(', ')}`)
  }
}
