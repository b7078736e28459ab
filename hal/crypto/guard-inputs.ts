import {
  checkAesKey,
  checkBlocks,
  checkBytes,
  checkGcmNonce,
  checkGcmTag,
  checkHkdf,
  checkIv,
  checkOptionalBytes,
  checkPrivateKey,
  checkPublicKey,
  curveInfo,
} from './validate.js'
import type { CryptoEngine } from './types.js'

/**
 * The engine behind one boundary: every argument is checked here before the library sees it,
 * so both engines refuse the same inputs with the same CryptoInputError, and the libraries'
 * own errors can only mean what each engine maps them to (bad tag, bad padding, bad point).
 */
export function guardInputs(engine: CryptoEngine): CryptoEngine {
  return {
    name: engine.name,
    aesEcbEncrypt(key, data) {
      checkAesKey(key)
      checkBlocks(data, 'data')
      return engine.aesEcbEncrypt(key, data)
    },
    aesEcbDecrypt(key, data) {
      checkAesKey(key)
      checkBlocks(data, 'data')
      return engine.aesEcbDecrypt(key, data)
    },
    aesCbcEncrypt(key, iv, data) {
      checkAesKey(key)
      checkIv(iv)
      checkBytes(data, 'data')
      return engine.aesCbcEncrypt(key, iv, data)
    },
    aesCbcDecrypt(key, iv, data) {
      checkAesKey(key)
      checkIv(iv)
      checkBlocks(data, 'ciphertext', true)
      return engine.aesCbcDecrypt(key, iv, data)
    },
    aesGcmEncrypt(key, nonce, plaintext, aad) {
      checkAesKey(key)
      checkGcmNonce(nonce)
      checkBytes(plaintext, 'plaintext')
      checkOptionalBytes(aad, 'aad')
      return engine.aesGcmEncrypt(key, nonce, plaintext, aad)
    },
    aesGcmDecrypt(key, nonce, ciphertext, tag, aad) {
      checkAesKey(key)
      checkGcmNonce(nonce)
      checkBytes(ciphertext, 'ciphertext')
      checkGcmTag(tag)
      checkOptionalBytes(aad, 'aad')
      return engine.aesGcmDecrypt(key, nonce, ciphertext, tag, aad)
    },
    ecdh(curve, privateKey, peerPublicKey) {
      const info = curveInfo(curve)
      checkPrivateKey(info, privateKey)
      checkPublicKey(info, peerPublicKey)
      return engine.ecdh(curve, privateKey, peerPublicKey)
    },
    generateKeyPair(curve, random) {
      curveInfo(curve)
      return engine.generateKeyPair(curve, random)
    },
    hkdfSha256(ikm, salt, info, length) {
      checkHkdf(ikm, salt, info, length)
      return engine.hkdfSha256(ikm, salt, info, length)
    },
  }
}
