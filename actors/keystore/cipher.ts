import { AuthenticationError, CipherError } from '../../hal/index.js'
import { encodeBase64, LogType } from '../../protocol/index.js'
import { type CipherRequest, type Direction, parseCipherRequest } from './cipher-request.js'
import { cryptoKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import { derivedSecret } from './crypto-shared-secret.js'
import { storedAesKey } from './crypto-stored-aes-key.js'
import type { KeystoreContext } from './keystore-context.js'

/** `POST /api/crypto/cipher/encrypt` and `decrypt` (device contract §5). */
export const cipher: Record<Direction, CryptoOperation<CipherRequest>> = {
  encrypt: {
    logType: LogType.CRYPTO_ENCRYPT,
    parse: (request) => parseCipherRequest(request, 'encrypt'),
    run: (actor, request, kid) => encrypt(actor, request, kid),
  },
  decrypt: {
    logType: LogType.CRYPTO_DECRYPT,
    parse: (request) => parseCipherRequest(request, 'decrypt'),
    run: (actor, request, kid) => decrypt(actor, request, kid),
  },
}

function encrypt(actor: KeystoreContext, request: CipherRequest, kid: string): Record<string, string> {
  const { engine } = actor
  const key = cipherKey(actor, request, kid)
  try {
    switch (request.alg.mode) {
      case 'ECB':
        return { ciphertext: encodeBase64(engine.aesEcbEncrypt(key, request.msg)) }
      case 'CBC': {
        const iv = actor.random(16)
        return { ciphertext: encodeBase64(engine.aesCbcEncrypt(key, iv, request.msg)), iv: encodeBase64(iv) }
      }
      case 'GCM': {
        const iv = actor.random(16)
        const sealed = engine.aesGcmEncrypt(key, iv, request.msg, request.aad)
        return { ciphertext: encodeBase64(sealed.ciphertext), iv: encodeBase64(iv), tag: encodeBase64(sealed.tag) }
      }
    }
  } finally {
    key.fill(0)
  }
}

function decrypt(actor: KeystoreContext, request: CipherRequest, kid: string): Record<string, string> {
  const { engine } = actor
  const key = cipherKey(actor, request, kid)
  try {
    switch (request.alg.mode) {
      case 'ECB':
        return { plaintext: encodeBase64(engine.aesEcbDecrypt(key, request.msg)) }
      case 'CBC':
        return { plaintext: encodeBase64(engine.aesCbcDecrypt(key, request.iv!, request.msg)) }
      case 'GCM':
        return {
          plaintext: encodeBase64(engine.aesGcmDecrypt(key, request.iv!, request.msg, request.tag!, request.aad)),
        }
    }
  } catch (err) {
    if (err instanceof CipherError)
      throw new CryptoRefusal('bad_padding', 'The ciphertext does not decrypt: wrong key, IV or ciphertext')
    if (err instanceof AuthenticationError)
      throw new CryptoRefusal('authentication_failed', 'The GCM tag does not verify')
    throw err
  } finally {
    key.fill(0)
  }
}

/**
 * The AES key of a request, in a copy the caller wipes: the stored AES key cut to the alg's
 * width (direct), or HKDF-SHA256 of the ECDH secret with the peer (indirect).
 */
function cipherKey(actor: KeystoreContext, request: CipherRequest, kid: string): Uint8Array {
  const key = cryptoKey(actor, kid)
  const width = request.alg.keyBytes
  if (request.peer) return derivedSecret(actor, key, request.peer, 'encedo-aes', request.ctx, width)
  return storedAesKey(key, width, request.alg.name)
}
