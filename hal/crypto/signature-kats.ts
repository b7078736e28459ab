// ECDSA and EdDSA known-answer tests: NIST's SigVer verdicts, RFC 8032's exact signatures, and a
// sign-then-verify round trip per SEC curve (OpenSSL's ECDSA nonces are random, so a signature
// cannot be compared byte for byte).
import { sequence, unsignedInteger } from '../x509/der.js'
import { CURVES, edCurveOf } from './curves.js'
import { bytes, compressed, flipBit, hex, type Kat } from './kat-support.js'
import { nativeEddsaUsesNoble } from './native-signatures.js'
import { ECDSA_VECTORS, EDDSA_VECTORS, type EcdsaVector, type EddsaVector } from './signature-vectors.js'
import type { CryptoEngine, SecCurve } from './types.js'
import { ECDSA_DIGESTS } from './validate.js'
import { DH_VECTORS } from './vectors.js'

/** ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } (RFC 5480 §2.2, SEC 1 C.8). */
function derSignature(r: string, s: string): Uint8Array {
  return sequence(unsignedInteger(bytes(r)), unsignedInteger(bytes(s)))
}

function ecdsaKats(v: EcdsaVector): Kat<CryptoEngine>[] {
  const verify = (e: CryptoEngine) =>
    e.ecdsaVerify(v.curve, bytes(v.publicKey), v.digest, bytes(v.message), derSignature(v.r, v.s))
  const kats: Kat<CryptoEngine>[] = [{ name: v.name, passes: (e) => verify(e) === v.valid }]
  const privateKey = v.privateKey
  if (privateKey !== undefined) {
    kats.push({
      name: `${v.name} public key of d`,
      passes: (e) => hex(e.publicKey(v.curve, bytes(privateKey))) === compressed(v.curve, v.publicKey),
    })
  }
  return kats
}

/**
 * Alice's key pair of each SEC curve's ECDH vector signs "abc" under each digest; the signature
 * must verify under that digest, and not for "abd". Every pair, so that a sign that hashes
 * with one fixed digest fails (the SigVer vectors pin verify's digests).
 */
function roundTripKats(): Kat<CryptoEngine>[] {
  return DH_VECTORS.filter((v) => CURVES[v.curve].kind === 'weierstrass').flatMap((v) =>
    ECDSA_DIGESTS.map((digest) => {
      const curve = v.curve as SecCurve
      return {
        name: `ECDSA ${curve} ${digest} sign then verify (key of ${v.name})`,
        passes: (e: CryptoEngine) => {
          const signature = e.ecdsaSign(curve, bytes(v.alicePrivate), digest, bytes('616263'))
          const publicKey = bytes(compressed(curve, v.alicePublic))
          return (
            e.ecdsaVerify(curve, publicKey, digest, bytes('616263'), signature) &&
            !e.ecdsaVerify(curve, publicKey, digest, bytes('616264'), signature)
          )
        },
      }
    }),
  )
}

function eddsaKats(v: EddsaVector): Kat<CryptoEngine>[] {
  const [seed, publicKey, message, context] = [bytes(v.seed), bytes(v.publicKey), bytes(v.message), bytes(v.context)]
  const signature = bytes(v.signature)
  const shared = nativeEddsaUsesNoble(v.algorithm, context)
  return [
    {
      name: `${v.name} public key`,
      passes: (e) => hex(e.eddsaPublicKey(edCurveOf(v.algorithm), seed)) === v.publicKey,
    },
    {
      name: `${v.name} sign`,
      passes: (e) => hex(e.eddsaSign(v.algorithm, seed, message, context)) === v.signature,
      shared,
    },
    {
      name: `${v.name} verify, and refuse a flipped bit`,
      passes: (e) =>
        e.eddsaVerify(v.algorithm, publicKey, message, signature, context) &&
        !e.eddsaVerify(v.algorithm, publicKey, message, flipBit(signature), context),
      shared,
    },
  ]
}

export function signatureKats(): Kat<CryptoEngine>[] {
  return [...ECDSA_VECTORS.flatMap(ecdsaKats), ...roundTripKats(), ...EDDSA_VECTORS.flatMap(eddsaKats)]
}
