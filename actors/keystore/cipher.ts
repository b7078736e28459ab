import { AuthenticationError, CipherError, CryptoInputError } from '../../hal/index.js'
import {
  canAgree,
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  keyTypes,
  LogResult,
  type LogResultNumber,
  LogType,
} from '../../protocol/index.js'
import { journalSubject } from '../host/index.js'
import { CipherRequestError, parseCipherRequest, type CipherRequest, type Direction } from './cipher-request.js'
import type { KeystoreContext } from './keystore-context.js'
import { normalisePublicKey } from './public-key.js'

const HKDF_INFO = new TextEncoder().encode('encedo-aes')

/** A 406 of the contract's §5: the key, the ECDH or the authentication failed. */
class CipherRefusal extends Error {
  override readonly name = 'CipherRefusal'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * `POST /api/crypto/cipher/encrypt` and `decrypt`. Every 200, 400 and 406 is journaled (with the
 * KID when the request had a readable one) before it is answered; the 409 of a device that
 * cannot serve keys is not an operation and is not.
 */
export async function cipher(actor: KeystoreContext, req: CommandRequest, direction: Direction): Promise<CommandReply> {
  const unavailable = actor.unavailable()
  if (unavailable) return unavailable
  const type = direction === 'encrypt' ? LogType.CRYPTO_ENCRYPT : LogType.CRYPTO_DECRYPT
  const journal = (result: LogResultNumber, source: number, kid: string | undefined) =>
    actor.journal([
      { type, result, ...journalSubject(req.principal), data: { source, rid: req.rid, ...(kid ? { kid } : {}) } },
    ])

  let request: CipherRequest
  try {
    const raw = (req.body as { raw?: unknown } | undefined)?.raw
    request = parseCipherRequest(typeof raw === 'string' ? raw : '', direction)
  } catch (err) {
    if (!(err instanceof CipherRequestError)) throw err
    await journal(LogResult.ERROR, 400, err.kid)
    return fail(400, 'bad_request', err.message)
  }
  // The KID is in the body, which the guard does not read (it let any `keymgmt:use:…` through):
  // this is the one exact check of the scope.
  if (req.principal?.scope.toLowerCase() !== `keymgmt:use:${request.kid}`) return actor.denied(req)

  let body: Record<string, string>
  try {
    body = direction === 'encrypt' ? encrypt(actor, request) : decrypt(actor, request)
  } catch (err) {
    if (!(err instanceof CipherRefusal)) throw err
    await journal(LogResult.FAILED, 406, request.kid)
    return fail(406, err.code, err.message)
  }
  await journal(LogResult.OK, 200, request.kid)
  return { status: 200, body }
}

function encrypt(actor: KeystoreContext, request: CipherRequest): Record<string, string> {
  const { engine } = actor
  const key = cipherKey(actor, request)
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

function decrypt(actor: KeystoreContext, request: CipherRequest): Record<string, string> {
  const { engine } = actor
  const key = cipherKey(actor, request)
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
      throw new CipherRefusal('bad_padding', 'The ciphertext does not decrypt: wrong key, IV or ciphertext')
    if (err instanceof AuthenticationError)
      throw new CipherRefusal('authentication_failed', 'The GCM tag does not verify')
    throw err
  } finally {
    key.fill(0)
  }
}

/**
 * The AES key of a request, in a copy the caller wipes: the stored AES key cut to the alg's
 * width (direct), or HKDF-SHA256 of the ECDH secret with the peer (indirect).
 */
function cipherKey(actor: KeystoreContext, request: CipherRequest): Uint8Array {
  const key = actor.repository.get(request.kid)
  if (!key) throw new CipherRefusal('key_not_found', 'No key with this kid')
  const width = request.alg.keyBytes
  const spec = keyTypes[key.type]
  if (!request.peer) {
    if (spec.kind !== 'aes' || !key.secret) {
      throw new CipherRefusal('wrong_key_type', 'The key is not an AES key (an ECDH key needs `ext_kid` or `pubkey`)')
    }
    if (key.secret.length < width)
      throw new CipherRefusal('key_too_short', `${request.alg.name} needs a key of at least ${width} bytes`)
    return key.secret.slice(0, width)
  }
  if (!('curve' in spec) || !canAgree(key.type, key.mode) || !key.secret) {
    throw new CipherRefusal('wrong_key_type', 'The key is not an ECDH private key')
  }
  const peer = peerPublicKey(actor, request.peer, key.type)
  let shared: Uint8Array
  try {
    shared = actor.engine.ecdh(spec.curve, key.secret, peer)
  } catch (err) {
    if (err instanceof CryptoInputError) throw new CipherRefusal('ecdh_failed', 'The ECDH with the peer key failed')
    throw err
  }
  const info = new Uint8Array(HKDF_INFO.length + request.ctx.length)
  info.set(HKDF_INFO)
  info.set(request.ctx, HKDF_INFO.length)
  try {
    return actor.engine.hkdfSha256(shared, undefined, info, width)
  } finally {
    shared.fill(0)
  }
}

function peerPublicKey(actor: KeystoreContext, peer: NonNullable<CipherRequest['peer']>, type: string): Uint8Array {
  if ('extKid' in peer) {
    const stored = actor.repository.get(peer.extKid)
    if (!stored) throw new CipherRefusal('key_not_found', 'No key with this ext_kid')
    if (stored.type !== type || !stored.publicKey)
      throw new CipherRefusal('wrong_key_type', 'The ext_kid key is not of the type of the kid key')
    return stored.publicKey
  }
  const key = normalisePublicKey(type as Parameters<typeof normalisePublicKey>[0], peer.publicKey)
  if (!key) throw new CipherRefusal('wrong_key_type', '`pubkey` is not a public key of the type of the kid key')
  return key
}
