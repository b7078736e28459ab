// RFC 8032 EdDSA on @noble/curves: all of the noble engine's, and the variants node:crypto
// lacks (Node 20 takes no context and no prehash) for the native one. Inputs arrive checked.
import { edCurveOf, edVariant } from './curves.js'
import { eddsaRTorsionFree } from './eddsa-public-key-valid.js'
import { NOBLE_EDDSA as EDDSA, NOBLE_EDWARDS } from './noble-curves.js'
import type { EdAlgorithm, EdCurve } from './types.js'

/** A variant without a context input (pure Ed25519: noble refuses one); the others always take theirs. */
function options(algorithm: EdAlgorithm, context: Uint8Array) {
  return edVariant(algorithm).context === 'none' ? {} : { context }
}

export function nobleEddsaPublicKey(curve: EdCurve, seed: Uint8Array): Uint8Array {
  return NOBLE_EDWARDS[curve].getPublicKey(seed)
}

export function nobleEddsaSign(
  algorithm: EdAlgorithm,
  seed: Uint8Array,
  message: Uint8Array,
  context: Uint8Array,
): Uint8Array {
  return EDDSA[algorithm].sign(message, seed, options(algorithm, context))
}

/**
 * RFC 8032's strict rules (zip215 off), as OpenSSL applies them: a non-canonical point or an
 * s ≥ L is refused. A public key that does not decode to a point makes noble throw: false.
 * noble's equation is cofactored: R must also be torsion-free (see eddsaRTorsionFree).
 */
export function nobleEddsaVerify(
  algorithm: EdAlgorithm,
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  context: Uint8Array,
): boolean {
  try {
    const verified = EDDSA[algorithm].verify(signature, message, publicKey, {
      ...options(algorithm, context),
      zip215: false,
    })
    return verified && eddsaRTorsionFree(edCurveOf(algorithm), signature)
  } catch {
    return false
  }
}
