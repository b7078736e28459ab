// The node:crypto (OpenSSL, AES-NI) engine: the one the device uses when its KATs pass.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  type Cipher,
  type Decipher,
} from 'node:crypto'
import { AuthenticationError, CipherError } from './errors.js'
import { guardInputs } from './guard-inputs.js'
import { nativeEcdh, nativeGenerateKeyPair, nativePublicKey } from './native-ecdh.js'
import {
  nativeEcdsaSign,
  nativeEcdsaVerify,
  nativeEddsaPublicKey,
  nativeEddsaSign,
  nativeEddsaVerify,
  NODE_DIGEST,
} from './native-signatures.js'
import { DEFAULT_IV } from './rfc3394.js'
import type { CryptoEngine } from './types.js'

const TAG_LENGTH = 16

function algorithm<M extends string>(key: Uint8Array, mode: M) {
  return `aes-${(key.length * 8) as 128 | 192 | 256}-${mode}` as const
}

/** OpenSSL names RFC 3394 by its OID's name. */
function wrapAlgorithm(kek: Uint8Array) {
  return `id-aes${kek.length * 8}-wrap`
}

/**
 * Copied out, not a view: small Buffers are slices of a shared pool that must not leak out. The
 * Buffers are wiped, since they hold plaintexts and unwrapped keys. A decipher whose final()
 * throws (bad tag, bad padding, failed unwrap) has its update() output wiped too.
 */
function run(cipher: Cipher | Decipher, data: Uint8Array): Uint8Array {
  const head = cipher.update(data)
  try {
    const tail = cipher.final()
    const out = new Uint8Array(head.length + tail.length)
    out.set(head)
    out.set(tail, head.length)
    tail.fill(0)
    return out
  } finally {
    head.fill(0)
  }
}

export const nativeEngine: CryptoEngine = guardInputs({
  name: 'native',
  aesEcbEncrypt(key, data) {
    return run(createCipheriv(algorithm(key, 'ecb'), key, null).setAutoPadding(false), data)
  },
  aesEcbDecrypt(key, data) {
    return run(createDecipheriv(algorithm(key, 'ecb'), key, null).setAutoPadding(false), data)
  },
  aesCbcEncrypt(key, iv, data) {
    return run(createCipheriv(algorithm(key, 'cbc'), key, iv), data)
  },
  aesCbcDecrypt(key, iv, data) {
    try {
      return run(createDecipheriv(algorithm(key, 'cbc'), key, iv), data)
    } catch (cause) {
      throw new CipherError('CBC decryption failed: invalid padding', { cause })
    }
  },
  aesGcmEncrypt(key, nonce, plaintext, aad) {
    const cipher = createCipheriv(algorithm(key, 'gcm'), key, nonce, { authTagLength: TAG_LENGTH })
    if (aad) cipher.setAAD(aad)
    const ciphertext = run(cipher, plaintext)
    return { ciphertext, tag: Uint8Array.from(cipher.getAuthTag()) }
  },
  aesGcmDecrypt(key, nonce, ciphertext, tag, aad) {
    const decipher = createDecipheriv(algorithm(key, 'gcm'), key, nonce, { authTagLength: TAG_LENGTH })
    decipher.setAuthTag(tag)
    if (aad) decipher.setAAD(aad)
    try {
      return run(decipher, ciphertext)
    } catch (cause) {
      throw new AuthenticationError('GCM authentication failed', { cause })
    }
  },
  ecdh: nativeEcdh,
  generateKeyPair: nativeGenerateKeyPair,
  hkdfSha256(ikm, salt, info, length) {
    return new Uint8Array(hkdfSync('sha256', ikm, salt ?? new Uint8Array(0), info, length))
  },
  publicKey: nativePublicKey,
  ecdsaSign: nativeEcdsaSign,
  ecdsaVerify: nativeEcdsaVerify,
  eddsaPublicKey: nativeEddsaPublicKey,
  eddsaSign: nativeEddsaSign,
  eddsaVerify: nativeEddsaVerify,
  digest(digest, data) {
    return new Uint8Array(createHash(NODE_DIGEST[digest]).update(data).digest())
  },
  hmac(digest, key, message) {
    return new Uint8Array(createHmac(NODE_DIGEST[digest], key).update(message).digest())
  },
  aesKeyWrap(kek, data, iv) {
    return run(createCipheriv(wrapAlgorithm(kek), kek, iv ?? DEFAULT_IV), data)
  },
  aesKeyUnwrap(kek, wrapped, iv) {
    try {
      return run(createDecipheriv(wrapAlgorithm(kek), kek, iv ?? DEFAULT_IV), wrapped)
    } catch (cause) {
      throw new AuthenticationError('key unwrap failed: integrity check', { cause })
    }
  },
})
