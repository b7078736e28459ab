// The one rule every EdDSA verify applies to its public key, on both engines and every variant;
// the key store applies it at import too.
import { NOBLE_EDWARDS } from './noble-curves.js'
import type { EdCurve } from './types.js'

// A torsion check is a scalar multiplication in pure JS (about 1 ms for Ed25519, 3 ms for Ed448),
// twenty times OpenSSL's whole Ed25519 verify: answers are kept, by value, for the keys in use.
const REMEMBERED = 1024
const answers = new Map<string, boolean>()

/**
 * Whether `publicKey` is the canonical encoding (y < p, no x sign bit on x = 0) of a point of the
 * prime-order subgroup other than the identity. RFC 8032 lets a verifier pick the cofactored or
 * the cofactorless equation, and OpenSSL and @noble picked differently: they can disagree on a
 * key with a small-order component, and a small-order key (the identity above all) makes one
 * signature verify for many messages or every one. Within the subgroup both equations agree.
 */
export function eddsaPublicKeyValid(curve: EdCurve, publicKey: Uint8Array): boolean {
  const Point = NOBLE_EDWARDS[curve].Point
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== Point.Fp.BYTES) return false
  const id = curve + Buffer.from(publicKey).toString('hex')
  let valid = answers.get(id)
  if (valid === undefined) {
    valid = inPrimeOrderSubgroup(curve, publicKey)
    if (answers.size >= REMEMBERED) answers.delete(answers.keys().next().value!)
    answers.set(id, valid)
  }
  return valid
}

function inPrimeOrderSubgroup(curve: EdCurve, encoded: Uint8Array): boolean {
  try {
    const point = NOBLE_EDWARDS[curve].Point.fromBytes(encoded, false)
    return !point.is0() && point.isTorsionFree()
  } catch {
    return false
  }
}

/**
 * Whether R, the first half of a signature, is in the prime-order subgroup. A cofactored
 * equation, [c]([s]B − R − [k]A) = 0 (noble's for every curve, OpenSSL's for Ed448), also holds
 * for an R off by a small-order point, where a cofactorless one, R = [s]B − [k]A (OpenSSL's for
 * Ed25519, whose R is then that point), does not. With A in the subgroup too, the two agree.
 * It costs a scalar multiplication, so it is asked only of a signature that verified.
 */
export function eddsaRTorsionFree(curve: EdCurve, signature: Uint8Array): boolean {
  return NOBLE_EDWARDS[curve].Point.fromBytes(signature.subarray(0, signature.length / 2)).isTorsionFree()
}

/** Whether the second half of a signature, s, is below the group order L (RFC 8032 §5.1.7, §5.2.7). */
export function eddsaScalarCanonical(curve: EdCurve, signature: Uint8Array): boolean {
  const half = signature.length / 2
  let s = 0n
  for (let at = signature.length - 1; at >= half; at--) s = (s << 8n) | BigInt(signature[at]!)
  return s < NOBLE_EDWARDS[curve].Point.Fn.ORDER
}
