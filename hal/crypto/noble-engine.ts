// The pure-JS engine: portable, several times slower, the fallback when native fails its KATs.
import { cbc, ecb, gcm } from '@noble/ciphers/aes.js'
import { hkdf } from '@noble/hashes/hkdf.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js'
import { sha3_256, sha3_384, sha3_512 } from '@noble/hashes/sha3.js'
import type { CHash } from '@noble/hashes/utils.js'
import { CURVES, isMontgomery } from './curves.js'
import { drawPrivateKey } from './draw-private-key.js'
import { AuthenticationError, CipherError, CryptoInputError } from './errors.js'
import { guardInputs } from './guard-inputs.js'
import { NOBLE_MONTGOMERY as MONTGOMERY, NOBLE_SEC as SEC } from './noble-curves.js'
import { nobleEddsaPublicKey, nobleEddsaSign, nobleEddsaVerify } from './noble-eddsa.js'
import { unwrap, wrap } from './rfc3394.js'
import type { CryptoEngine, Curve, Digest } from './types.js'

const TAG_LENGTH = 16

const HASH: Record<Digest, CHash> = {
  'SHA2-256': sha256,
  'SHA2-384': sha384,
  'SHA2-512': sha512,
  'SHA3-256': sha3_256,
  'SHA3-384': sha3_384,
  'SHA3-512': sha3_512,
}

function publicKey(curve: Curve, privateKey: Uint8Array): Uint8Array {
  return isMontgomery(curve) ? MONTGOMERY[curve].getPublicKey(privateKey) : SEC[curve].getPublicKey(privateKey, true)
}

/** One AES block under `key`; the key schedule is recomputed per block, cheap next to a wrap's use. */
function aesBlock(key: Uint8Array, direction: 'encrypt' | 'decrypt') {
  return (block: Uint8Array) => ecb(key, { disablePadding: true })[direction](block)
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
    return { privateKey, publicKey: publicKey(curve, privateKey) }
  },
  hkdfSha256(ikm, salt, info, length) {
    return hkdf(sha256, ikm, salt, info, length)
  },
  publicKey,
  // RFC 6979 deterministic nonces, and high S left as it comes, as OpenSSL leaves it.
  ecdsaSign(curve, privateKey, digest, message) {
    return SEC[curve].sign(HASH[digest](message), privateKey, { prehash: false, lowS: false, format: 'der' })
  },
  ecdsaVerify(curve, publicKey, digest, message, signature) {
    const options = { prehash: false, lowS: false, format: 'der' } as const
    try {
      return SEC[curve].verify(signature, HASH[digest](message), publicKey, options)
    } catch {
      // A public key that is not a point, or DER noble cannot parse.
      return false
    }
  },
  eddsaPublicKey: nobleEddsaPublicKey,
  eddsaSign: nobleEddsaSign,
  eddsaVerify: nobleEddsaVerify,
  digest(digest, data) {
    return HASH[digest](data)
  },
  hmac(digest, key, message) {
    return hmac(HASH[digest], key, message)
  },
  aesKeyWrap(kek, data, iv) {
    return wrap(aesBlock(kek, 'encrypt'), data, iv)
  },
  aesKeyUnwrap(kek, wrapped, iv) {
    return unwrap(aesBlock(kek, 'decrypt'), wrapped, iv)
  },
})
