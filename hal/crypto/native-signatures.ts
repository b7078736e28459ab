// ECDSA and EdDSA on node:crypto (OpenSSL). Inputs arrive already checked. EC keys and EdDSA public
// keys go in as JWK, the fast import path; EdDSA private keys as DER (see native-ecdh.ts).
import { createPrivateKey, createPublicKey, ECDH, sign, verify, type KeyObject } from 'node:crypto'
import { CURVES, curvesOf, edVariant, type SecCurve } from './curves.js'
import { b64, okpPrivateKey, secEcdh } from './native-ecdh.js'
import { imported, keyCache } from './native-key-cache.js'
import { eddsaRTorsionFree } from './eddsa-public-key-valid.js'
import { nobleEddsaSign, nobleEddsaVerify } from './noble-eddsa.js'
import type { Digest, EcdsaDigest, EdAlgorithm, EdCurve } from './types.js'

/** OpenSSL's names for the device's digests (ECDSA takes the SHA-2 three). */
export const NODE_DIGEST: Record<Digest, string> = {
  'SHA2-256': 'sha256',
  'SHA2-384': 'sha384',
  'SHA2-512': 'sha512',
  'SHA3-256': 'sha3-256',
  'SHA3-384': 'sha3-384',
  'SHA3-512': 'sha3-512',
}

const ecSigningKeys = keyCache(curvesOf('weierstrass'))
const ecVerifyingKeys = keyCache(curvesOf('weierstrass'))
const edSigningKeys = keyCache(curvesOf('edwards'))

/** The affine coordinates of an uncompressed SEC1 point, as JWK wants them. */
function coordinates(curve: SecCurve, uncompressed: Uint8Array) {
  const { size, jwk } = CURVES[curve]
  return {
    kty: 'EC',
    crv: jwk,
    x: b64(uncompressed.subarray(1, 1 + size)),
    y: b64(uncompressed.subarray(1 + size)),
  }
}

/** Node checks that x and y match d, so the point is computed first (an EC JWK needs all three). */
function ecPrivateKey(curve: SecCurve, privateKey: Uint8Array): KeyObject {
  const point = secEcdh(curve, privateKey).getPublicKey()
  return createPrivateKey({ key: { ...coordinates(curve, point), d: b64(privateKey) }, format: 'jwk' })
}

export function nativeEcdsaSign(
  curve: SecCurve,
  privateKey: Uint8Array,
  digest: EcdsaDigest,
  message: Uint8Array,
): Uint8Array {
  const key = imported(ecSigningKeys, curve, privateKey, () => ecPrivateKey(curve, privateKey))
  return new Uint8Array(sign(NODE_DIGEST[digest], message, { key, dsaEncoding: 'der' }))
}

export function nativeEcdsaVerify(
  curve: SecCurve,
  publicKey: Uint8Array,
  digest: EcdsaDigest,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  try {
    // convertKey throws for a point not on the curve; verify throws for some malformed DER.
    const key = imported(ecVerifyingKeys, curve, publicKey, () => {
      const point = ECDH.convertKey(publicKey, CURVES[curve].openssl, undefined, undefined, 'uncompressed') as Buffer
      return createPublicKey({ key: coordinates(curve, point), format: 'jwk' })
    })
    return verify(NODE_DIGEST[digest], message, { key, dsaEncoding: 'der' }, signature)
  } catch {
    return false
  }
}

function edPrivateKey(curve: EdCurve, seed: Uint8Array): KeyObject {
  return imported(edSigningKeys, curve, seed, () => okpPrivateKey(curve, seed))
}

export function nativeEddsaPublicKey(curve: EdCurve, seed: Uint8Array): Uint8Array {
  const { x } = createPublicKey(edPrivateKey(curve, seed)).export({ format: 'jwk' })
  return new Uint8Array(Buffer.from(x ?? '', 'base64url'))
}

/** The variants OpenSSL signs, which it does without a context: pure Ed25519, and Ed448 with an empty one. */
function openSslCurve(algorithm: EdAlgorithm, context: Uint8Array): EdCurve | undefined {
  const variant = edVariant(algorithm)
  return variant.openssl && (variant.context === 'none' || context.length === 0) ? variant.curve : undefined
}

/** Whether the native engine hands this variant to @noble/curves, the code the noble engine runs too. */
export function nativeEddsaUsesNoble(algorithm: EdAlgorithm, context: Uint8Array): boolean {
  return openSslCurve(algorithm, context) === undefined
}

export function nativeEddsaSign(
  algorithm: EdAlgorithm,
  seed: Uint8Array,
  message: Uint8Array,
  context: Uint8Array,
): Uint8Array {
  const curve = openSslCurve(algorithm, context)
  if (!curve) return nobleEddsaSign(algorithm, seed, message, context)
  return new Uint8Array(sign(null, message, edPrivateKey(curve, seed)))
}

export function nativeEddsaVerify(
  algorithm: EdAlgorithm,
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  context: Uint8Array,
): boolean {
  const curve = openSslCurve(algorithm, context)
  if (!curve) return nobleEddsaVerify(algorithm, publicKey, message, signature, context)
  let verified: boolean
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: CURVES[curve].jwk, x: b64(publicKey) }, format: 'jwk' })
    verified = verify(null, message, key, signature)
  } catch {
    return false
  }
  // A cofactored equation lets an R off the subgroup through (see eddsaRTorsionFree).
  return verified && (CURVES[curve].opensslCofactorless || eddsaRTorsionFree(curve, signature))
}
