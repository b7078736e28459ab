// ECDH, public keys and key generation on node:crypto (OpenSSL). Inputs arrive already checked.
import { createECDH, createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto'
import { CURVES, isMontgomery, type MontgomeryCurve, type SecCurve } from './curves.js'
import { drawPrivateKey } from './draw-private-key.js'
import { CryptoInputError } from './errors.js'
import type { Curve, KeyPair, RandomSource } from './types.js'

const JWK_CURVE: Record<MontgomeryCurve, string> = { CURVE25519: 'X25519', CURVE448: 'X448' }

export const OPENSSL_NAME: Record<SecCurve, string> = {
  SECP256R1: 'prime256v1',
  SECP384R1: 'secp384r1',
  SECP521R1: 'secp521r1',
  SECP256K1: 'secp256k1',
}

/**
 * Raw keys go in as JWK: importing PKCS#8 DER goes through OpenSSL 3's decoders, about ten
 * times slower (0.5 ms here). For a private key node builds the key from `d` alone and only
 * checks that `x` is a string, so `x` is left empty rather than computed; should a future
 * node check it, the KATs fail and the device falls back to noble.
 */
function montgomeryPrivate(curve: MontgomeryCurve, key: Uint8Array): KeyObject {
  const jwk = { kty: 'OKP', crv: JWK_CURVE[curve], x: '', d: Buffer.from(key).toString('base64url') }
  return createPrivateKey({ key: jwk, format: 'jwk' })
}

function montgomeryPublic(curve: MontgomeryCurve, key: Uint8Array): KeyObject {
  const jwk = { kty: 'OKP', crv: JWK_CURVE[curve], x: Buffer.from(key).toString('base64url') }
  return createPublicKey({ key: jwk, format: 'jwk' })
}

export function secEcdh(curve: SecCurve, privateKey: Uint8Array) {
  const ecdh = createECDH(OPENSSL_NAME[curve])
  ecdh.setPrivateKey(privateKey)
  return ecdh
}

export function nativeEcdh(curve: Curve, privateKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array {
  if (isMontgomery(curve)) {
    const keys = {
      privateKey: montgomeryPrivate(curve, privateKey),
      publicKey: montgomeryPublic(curve, peerPublicKey),
    }
    try {
      return new Uint8Array(diffieHellman(keys))
    } catch (cause) {
      // OpenSSL refuses only an all-zero result, i.e. a peer of small order (RFC 7748 §6).
      throw new CryptoInputError(`peer public key is a small-order ${curve} point`, { cause })
    }
  }
  const ecdh = secEcdh(curve, privateKey)
  try {
    return new Uint8Array(ecdh.computeSecret(peerPublicKey))
  } catch (cause) {
    throw new CryptoInputError(`peer public key is not a point on ${curve}`, { cause })
  }
}

export function nativePublicKey(curve: Curve, privateKey: Uint8Array): Uint8Array {
  if (isMontgomery(curve)) {
    const { x } = createPublicKey(montgomeryPrivate(curve, privateKey)).export({ format: 'jwk' })
    return new Uint8Array(Buffer.from(x ?? '', 'base64url'))
  }
  return new Uint8Array(secEcdh(curve, privateKey).getPublicKey(null, 'compressed'))
}

export function nativeGenerateKeyPair(curve: Curve, random: RandomSource): KeyPair {
  const privateKey = drawPrivateKey(CURVES[curve], random)
  return { privateKey, publicKey: nativePublicKey(curve, privateKey) }
}
