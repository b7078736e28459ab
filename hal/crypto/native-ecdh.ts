// ECDH, public keys and key generation on node:crypto (OpenSSL). Inputs arrive already checked.
import { createECDH, createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto'
import { integer, octetString, objectIdentifier, sequence } from '../x509/der.js'
import { CURVES, curvesOf, isMontgomery, type MontgomeryCurve, type SecCurve } from './curves.js'
import { drawPrivateKey } from './draw-private-key.js'
import { CryptoInputError } from './errors.js'
import { imported, keyCache } from './native-key-cache.js'
import type { Curve, EdCurve, KeyPair, RandomSource } from './types.js'

/** A view, not `Buffer.from(bytes)`: that copies anything under 4 KiB into Node's shared pool, never wiped. */
export const b64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')

/** PKCS#8 (RFC 8410) up to the raw key, which follows: the encoding of a zero key, less the key. */
const PKCS8_HEADER = Object.fromEntries(
  curvesOf('montgomery', 'edwards').map((curve) => {
    const { oids, size } = CURVES[curve]
    const der = sequence(
      integer(Uint8Array.of(0)),
      sequence(...oids.map(objectIdentifier)),
      octetString(octetString(new Uint8Array(size))),
    )
    return [curve, der.subarray(0, der.length - size)]
  }),
) as Readonly<Record<MontgomeryCurve | EdCurve, Uint8Array>>

/**
 * An X25519/X448/Ed25519/Ed448 private key. Not as JWK, though that imports ten times faster
 * (35 against 490 µs): node decodes an OKP JWK's `d` with Buffer.from, into its shared pool,
 * which is never wiped. The DER goes in a Buffer of its own, wiped once imported; the key
 * caches (native-key-cache.ts) make it one import per key.
 */
export function okpPrivateKey(curve: MontgomeryCurve | EdCurve, key: Uint8Array): KeyObject {
  const header = PKCS8_HEADER[curve]
  const der = Buffer.alloc(header.length + key.length)
  der.set(header)
  der.set(key, header.length)
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
  } finally {
    der.fill(0)
  }
}

const montgomeryKeys = keyCache(curvesOf('montgomery'))

function montgomeryPrivate(curve: MontgomeryCurve, key: Uint8Array): KeyObject {
  return imported(montgomeryKeys, curve, key, () => okpPrivateKey(curve, key))
}

/** Raw public keys go in as JWK: PKCS#8/SPKI DER goes through OpenSSL 3's decoders, ten times slower. */
function montgomeryPublic(curve: MontgomeryCurve, key: Uint8Array): KeyObject {
  const jwk = { kty: 'OKP', crv: CURVES[curve].jwk, x: b64(key) }
  return createPublicKey({ key: jwk, format: 'jwk' })
}

export function secEcdh(curve: SecCurve, privateKey: Uint8Array) {
  const ecdh = createECDH(CURVES[curve].openssl)
  ecdh.setPrivateKey(privateKey)
  return ecdh
}

export function nativeEcdh(curve: Curve, privateKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array {
  if (isMontgomery(curve)) {
    const keys = {
      privateKey: montgomeryPrivate(curve, privateKey),
      publicKey: montgomeryPublic(curve, peerPublicKey),
    }
    let secret: Buffer
    try {
      secret = diffieHellman(keys)
    } catch (cause) {
      // OpenSSL refuses only an all-zero result, i.e. a peer of small order (RFC 7748 §6).
      throw new CryptoInputError(`peer public key is a small-order ${curve} point`, { cause })
    }
    return copyAndWipe(secret)
  }
  const ecdh = secEcdh(curve, privateKey)
  let secret: Buffer
  try {
    secret = ecdh.computeSecret(peerPublicKey)
  } catch (cause) {
    throw new CryptoInputError(`peer public key is not a point on ${curve}`, { cause })
  }
  return copyAndWipe(secret)
}

/** Out of node's Buffer (possibly a slice of its shared pool) into an array of our own, the Buffer wiped. */
export function copyAndWipe(buffer: Buffer): Uint8Array {
  const copy = Uint8Array.from(buffer)
  buffer.fill(0)
  return copy
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
