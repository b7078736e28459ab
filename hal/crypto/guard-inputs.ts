import {
  checkAesKey,
  checkBlocks,
  checkBytes,
  checkDigest,
  checkEcdsaDigest,
  checkEdAlgorithm,
  checkEdCurve,
  checkGcmNonce,
  checkGcmTag,
  checkHkdf,
  checkIv,
  checkKeyWrapIv,
  checkLength,
  checkOptionalBytes,
  checkPrivateKey,
  checkPublicKey,
  checkSemiblocks,
  curveInfo,
  secCurveInfo,
  secPublicKeyEncoded,
} from './validate.js'
import { CURVES } from './curves.js'
import { eddsaPublicKeyValid, eddsaScalarCanonical } from './eddsa-public-key-valid.js'
import type { CryptoEngine } from './types.js'

/**
 * The engine behind one boundary: every argument is checked here before the library sees it,
 * so both engines refuse the same inputs with the same CryptoInputError, and the libraries'
 * own errors can only mean what each engine maps them to (bad tag, bad padding, bad point).
 * The methods are built once, by family, so a call costs no more than the checks.
 */
export function guardInputs(engine: CryptoEngine): CryptoEngine {
  return {
    name: engine.name,
    ...guardAes(engine),
    ...guardKeyWrap(engine),
    ...guardAgreement(engine),
    ...guardEcdsa(engine),
    ...guardEddsa(engine),
    ...guardHashes(engine),
  }
}

type AesMethods =
  'aesEcbEncrypt' | 'aesEcbDecrypt' | 'aesCbcEncrypt' | 'aesCbcDecrypt' | 'aesGcmEncrypt' | 'aesGcmDecrypt'

function guardAes(engine: CryptoEngine): Pick<CryptoEngine, AesMethods> {
  return {
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
  }
}

function guardKeyWrap(engine: CryptoEngine): Pick<CryptoEngine, 'aesKeyWrap' | 'aesKeyUnwrap'> {
  return {
    aesKeyWrap(kek, data, iv) {
      checkAesKey(kek)
      checkSemiblocks(data, 'key data', 2)
      checkKeyWrapIv(iv)
      return engine.aesKeyWrap(kek, data, iv)
    },
    aesKeyUnwrap(kek, wrapped, iv) {
      checkAesKey(kek)
      checkSemiblocks(wrapped, 'wrapped key', 3)
      checkKeyWrapIv(iv)
      return engine.aesKeyUnwrap(kek, wrapped, iv)
    },
  }
}

function guardAgreement(engine: CryptoEngine): Pick<CryptoEngine, 'ecdh' | 'generateKeyPair' | 'publicKey'> {
  return {
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
    publicKey(curve, privateKey) {
      checkPrivateKey(curveInfo(curve), privateKey)
      return engine.publicKey(curve, privateKey)
    },
  }
}

function guardEcdsa(engine: CryptoEngine): Pick<CryptoEngine, 'ecdsaSign' | 'ecdsaVerify'> {
  return {
    ecdsaSign(curve, privateKey, digest, message) {
      checkPrivateKey(secCurveInfo(curve), privateKey)
      checkEcdsaDigest(digest)
      checkBytes(message, 'message')
      return engine.ecdsaSign(curve, privateKey, digest, message)
    },
    ecdsaVerify(curve, publicKey, digest, message, signature) {
      const info = secCurveInfo(curve)
      checkBytes(publicKey, 'public key')
      checkEcdsaDigest(digest)
      checkBytes(message, 'message')
      checkBytes(signature, 'signature')
      // A key that is not SEC1 is a wrong key, as one off the curve is (types.ts): false.
      if (!secPublicKeyEncoded(info, publicKey)) return false
      return engine.ecdsaVerify(curve, publicKey, digest, message, signature)
    },
  }
}

function guardEddsa(engine: CryptoEngine): Pick<CryptoEngine, 'eddsaPublicKey' | 'eddsaSign' | 'eddsaVerify'> {
  return {
    eddsaPublicKey(curve, seed) {
      checkEdCurve(curve)
      checkLength(seed, 'EdDSA seed', CURVES[curve].size)
      return engine.eddsaPublicKey(curve, seed)
    },
    eddsaSign(algorithm, seed, message, context) {
      const curve = checkEdAlgorithm(algorithm, context)
      checkLength(seed, 'EdDSA seed', CURVES[curve].size)
      checkBytes(message, 'message')
      return engine.eddsaSign(algorithm, seed, message, context)
    },
    eddsaVerify(algorithm, publicKey, message, signature, context) {
      const curve = checkEdAlgorithm(algorithm, context)
      checkBytes(publicKey, 'EdDSA public key')
      checkBytes(message, 'message')
      checkBytes(signature, 'signature')
      // A malformed signature or key is a wrong one, not a wrong call (types.ts). The key rule is
      // applied here, before either engine, so that their equations (OpenSSL's cofactorless,
      // noble's cofactored) cannot disagree; eddsaRTorsionFree holds R to the same subgroup.
      if (signature.length !== CURVES[curve].signature || !eddsaScalarCanonical(curve, signature)) return false
      if (!eddsaPublicKeyValid(curve, publicKey)) return false
      return engine.eddsaVerify(algorithm, publicKey, message, signature, context)
    },
  }
}

function guardHashes(engine: CryptoEngine): Pick<CryptoEngine, 'digest' | 'hmac' | 'hkdfSha256'> {
  return {
    digest(digest, data) {
      checkDigest(digest)
      checkBytes(data, 'data')
      return engine.digest(digest, data)
    },
    hmac(digest, key, message) {
      checkDigest(digest)
      checkBytes(key, 'HMAC key')
      checkBytes(message, 'message')
      return engine.hmac(digest, key, message)
    },
    hkdfSha256(ikm, salt, info, length) {
      checkHkdf(ikm, salt, info, length)
      return engine.hkdfSha256(ikm, salt, info, length)
    },
  }
}
