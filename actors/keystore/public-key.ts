import {
  compressedSecPoint,
  eddsaPublicKeyValid,
  mlKemModulusHolds,
  montgomeryPublicKeyValid,
} from '../../hal/index.js'
import { keyTypes, type KeyType } from '../../protocol/index.js'

/**
 * A public key of `type` in the form the device stores and shows (raw for X25519, X448, Ed* and ML-*,
 * compressed SEC1 for the SECP curves; uncompressed SEC1 is accepted and compressed), or
 * undefined when the bytes are not a valid public key of that type: a wrong length, a point
 * off the curve (SECP), outside the prime-order subgroup (Ed*) or of small order (X25519, X448),
 * or an ML-KEM key failing FIPS 203's modulus check. Such keys are refused here, so that they
 * never reach an operation.
 */
export function normalisePublicKey(type: KeyType, bytes: Uint8Array): Uint8Array | undefined {
  const spec = keyTypes[type]
  try {
    switch (spec.kind) {
      case 'ec':
        return compressedSecPoint(spec.curve, bytes)
      case 'eddsa':
        // Only a canonical point of the prime-order subgroup: the one rule every EdDSA verify keeps.
        return eddsaPublicKeyValid(spec.curve, bytes) ? Uint8Array.from(bytes) : undefined
      case 'ecdh':
        // No point of small order: every agreement with one is all zeros (RFC 7748 §6), so every use refused.
        return montgomeryPublicKeyValid(spec.curve, bytes) ? Uint8Array.from(bytes) : undefined
      case 'mlkem':
        return bytes.length === spec.publicKey && mlKemModulusHolds(bytes) ? Uint8Array.from(bytes) : undefined
      case 'mldsa':
        // Every ML-DSA t1 encoding is valid (FIPS 204).
        return bytes.length === spec.publicKey ? Uint8Array.from(bytes) : undefined
      default:
        return undefined
    }
  } catch {
    return undefined
  }
}
