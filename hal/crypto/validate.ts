// Boundary checks shared by both engines, so that both reject exactly the same inputs.
import { CURVES, bytesToBigInt, isCurve, type CurveInfo } from './curves.js'
import { CryptoInputError } from './errors.js'

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

function checkLength(value: unknown, name: string, length: number): asserts value is Uint8Array {
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

export function curveInfo(curve: unknown): CurveInfo {
  // The value is not echoed: a caller who swapped arguments would be passing a key.
  if (!isCurve(curve)) {
    throw new CryptoInputError(`unknown curve; expected one of ${Object.keys(CURVES).join(', ')}`)
  }
  return CURVES[curve]
}

export function checkPrivateKey(info: CurveInfo, key: unknown): asserts key is Uint8Array {
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
export function checkPublicKey(info: CurveInfo, key: unknown): asserts key is Uint8Array {
  if (info.kind === 'montgomery') return checkLength(key, 'public key', info.size)
  checkBytes(key, 'public key')
  const compressed = (key[0] === 0x02 || key[0] === 0x03) && key.length === 1 + info.size
  const uncompressed = key[0] === 0x04 && key.length === 1 + 2 * info.size
  if (!compressed && !uncompressed) {
    throw new CryptoInputError(
      `public key must be SEC1 compressed (${1 + info.size} bytes, 0x02/0x03) or uncompressed ` +
        `(${1 + 2 * info.size} bytes, 0x04), got ${key.length} bytes`,
    )
  }
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
