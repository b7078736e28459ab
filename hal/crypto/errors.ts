import { HalError } from '../errors.js'

/**
 * An argument a crypto primitive does not accept: wrong type, wrong length, unknown curve, a
 * scalar out of range or a point not on the curve. A RangeError, since each is a value outside
 * the primitive's domain. Messages name the argument and never echo its bytes.
 */
export class CryptoInputError extends RangeError {
  override name = 'CryptoInputError'
}

/** CBC decryption ended in invalid PKCS#7 padding: wrong key or IV, or corrupted ciphertext. */
export class CipherError extends HalError {
  override name = 'CipherError'
}

/** A GCM tag did not verify: the ciphertext, tag, nonce, aad or key is not the one sealed. */
export class AuthenticationError extends HalError {
  override name = 'AuthenticationError'
}
