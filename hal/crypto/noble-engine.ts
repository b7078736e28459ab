// The pure-JS engine: portable, several times slower, the fallback when native fails its KATs.
import { cbc, ecb, gcm } from '@noble/ciphers/aes.js'
import { x25519 } from '@noble/curves/ed25519.js'
import { x448 } from '@noble/curves/ed448.js'
import { p256, p384, p521 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { CURVES, isMontgomery, type MontgomeryCurve, type SecCurve } from './curves.js'
import { drawPrivateKey } from './draw-private-key.js'
import { AuthenticationError, CipherError, CryptoInputError } from './errors.js'
import { guardInputs } from './guard-inputs.js'
import type { CryptoEngine, Curve } from './types.js'

const TAG_LENGTH = 16

const MONTGOMERY: Record<MontgomeryCurve, typeof x25519> = { CURVE25519: x25519, CURVE448: x448 }
const SEC: Record<SecCurve, typeof p256> = {
  SECP256R1: p256,
  SECP384R1: p384,
  SECP521R1: p521,
  SECP256K1: secp256k1,
}

function sharedSecret(curve: Curve, privateKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array {
  if (isMontgomery(curve)) return MONTGOMERY[curve].getSharedSecret(privateKey, peerPublicKey)
  // noble returns the shared point compressed; the secret is its x-coordinate.
  return SEC[curve].getSharedSecret(privateKey, peerPublicKey, true).slice(1)
}

export const nobleEngine: CryptoEngine = guardInputs({
  name: 'noble',
  aesEcbEncrypt(key, data) {
    return ecb(key, { disablePadding: true }).encrypt(data)
  },
  aesEcbDecrypt(key, data) {
    return ecb(key, { disablePadding: true }).decrypt(data)
  },
  aesCbcEncrypt(key, iv, data) {
    return cbc(key, iv).encrypt(data)
  },
  aesCbcDecrypt(key, iv, data) {
    try {
      return cbc(key, iv).decrypt(data)
    } catch (cause) {
      throw new CipherError('CBC decryption failed: invalid padding', { cause })
    }
  },
  aesGcmEncrypt(key, nonce, plaintext, aad) {
    const sealed = gcm(key, nonce, aad).encrypt(plaintext)
    const split = sealed.length - TAG_LENGTH
    return { ciphertext: sealed.slice(0, split), tag: sealed.slice(split) }
  },
  aesGcmDecrypt(key, nonce, ciphertext, tag, aad) {
    const sealed = new Uint8Array(ciphertext.length + TAG_LENGTH)
    sealed.set(ciphertext)
    sealed.set(tag, ciphertext.length)
    try {
      return gcm(key, nonce, aad).decrypt(sealed)
    } catch (cause) {
      throw new AuthenticationError('GCM authentication failed', { cause })
    }
  },
  ecdh(curve, privateKey, peerPublicKey) {
    try {
      return sharedSecret(curve, privateKey, peerPublicKey)
    } catch (cause) {
      const problem = isMontgomery(curve) ? `a small-order ${curve} point` : `not a point on ${curve}`
      throw new CryptoInputError(`peer public key is ${problem}`, { cause })
    }
  },
  generateKeyPair(curve, random) {
    const privateKey = drawPrivateKey(CURVES[curve], random)
    const publicKey = isMontgomery(curve)
      ? MONTGOMERY[curve].getPublicKey(privateKey)
      : SEC[curve].getPublicKey(privateKey, true)
    return { privateKey, publicKey }
  },
  hkdfSha256(ikm, salt, info, length) {
    return hkdf(sha256, ikm, salt, info, length)
  },
})
