// The AES cipher operations (device contract §5): the request's fields, encrypt and decrypt.
import { AuthenticationError, CipherError } from '../../hal/index.js'
import { encodeBase64, LogType } from '../../protocol/index.js'
import { cryptoKey, derivedSecret, storedAesKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import { type CryptoRequest, MSG_BYTES, type Peer } from './crypto-request.js'
import type { KeystoreContext } from './keystore-context.js'

export type CipherMode = 'ECB' | 'CBC' | 'GCM'

export interface CipherAlg {
  name: string
  keyBytes: 16 | 24 | 32
  mode: CipherMode
}

/** The nine `alg` values of the seed (§2.8). */
export const cipherAlgs: Readonly<Record<string, CipherAlg>> = Object.fromEntries(
  ([16, 24, 32] as const).flatMap((keyBytes) =>
    (['ECB', 'CBC', 'GCM'] as const).map((mode) => {
      const name = `AES${keyBytes * 8}-${mode}`
      return [name, { name, keyBytes, mode }]
    }),
  ),
)

export const LIMITS = { plaintext: MSG_BYTES, ciphertext: MSG_BYTES + 16, ctx: 64, aad: 64, iv: 16, tag: 16 } as const

export type Direction = 'encrypt' | 'decrypt'

export interface CipherRequest {
  alg: CipherAlg
  /** The peer of an indirect ECDH: a stored public key, or one given in the request. */
  peer?: Peer
  /** Plaintext to encrypt, or ciphertext to decrypt. */
  msg: Uint8Array
  ctx: Uint8Array
  aad?: Uint8Array
  iv?: Uint8Array
  tag?: Uint8Array
}

/** Checks the fields of an encrypt or decrypt body (device contract §5). */
export function parseCipherRequest(request: CryptoRequest, direction: Direction): CipherRequest {
  const alg = cipherAlgs[request.choice('alg', Object.keys(cipherAlgs), true)!]!
  const msg = request.msg(direction === 'encrypt' ? LIMITS.plaintext : LIMITS.ciphertext)
  const ctx = request.bytes('ctx', LIMITS.ctx) ?? new Uint8Array(0)
  const aad = request.bytes('aad', LIMITS.aad)
  if (aad && alg.mode !== 'GCM') throw request.bad('`aad` is for the GCM algorithms only')
  if (alg.mode === 'ECB' && msg.length % 16 !== 0)
    throw request.bad('ECB takes whole 16-byte blocks: `msg` must be a multiple of 16 bytes')

  const parsed: CipherRequest = { alg, msg, ctx, ...(aad ? { aad } : {}) }
  const peer = request.peer()
  if (peer) parsed.peer = peer
  if (direction === 'decrypt' && alg.mode !== 'ECB') {
    parsed.iv = request.exactly('iv', LIMITS.iv, true)!
    if (alg.mode === 'CBC' && msg.length % 16 !== 0)
      throw request.bad('CBC ciphertext must be a non-zero multiple of 16 bytes')
    if (alg.mode === 'GCM') parsed.tag = request.exactly('tag', LIMITS.tag, true)!
  }
  return parsed
}

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
