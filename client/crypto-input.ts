// What the crypto calls take, checked against crypto-contract §3 before anything is sent, and the
// JSON bodies they send: a caller's mistake gets a message naming the field, not a device's 400.
import { digests, isDigest, isKeyType, keyTypes } from '../protocol/browser.js'
import type * as T from './types.js'
import { toBase64 as b64 } from './base64.js'

/** An argument of a crypto call that the device would refuse; the message names the field, never its bytes. */
export class CryptoInputError extends RangeError {
  override name = 'CryptoInputError'
}

export const SIGN_ALGS: readonly T.SignAlg[] = [
  'SHA256WithECDSA',
  'SHA384WithECDSA',
  'SHA512WithECDSA',
  'Ed25519',
  'Ed25519ctx',
  'Ed25519ph',
  'Ed448',
  'Ed448ph',
]
export const WRAP_ALGS: readonly T.WrapAlg[] = ['AES128', 'AES192', 'AES256']

/**
 * The device's bounds (crypto-contract §3). A signature or MAC within them that does not verify
 * is the device's 406 (false); only longer ones are malformed, far above the longest real one
 * (a DER P-521 ECDSA signature, 139 bytes; ML-DSA-87's, 4627).
 */
export const LIMITS = { msg: 2048, signCtx: 255, wrapCtx: 64, iv: 8, signature: 512, mac: 64, mlDsa: 5000 } as const

/** Raw X25519 and X448 keys, and SEC1 points of the four SECP curves, compressed or not. */
const PEER_KEY_BYTES = new Set([32, 56, 33, 49, 67, 65, 97, 133])

function bytesOf(value: unknown, field: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new CryptoInputError(`${field} must be a Uint8Array`)
  return value
}

function sized(value: unknown, field: string, min: number, max: number): string {
  const bytes = bytesOf(value, field)
  if (bytes.length < min || bytes.length > max)
    throw new CryptoInputError(`${field} must be ${min === max ? min : `${min} to ${max}`} bytes, not ${bytes.length}`)
  return b64(bytes)
}

function optionalSized(value: unknown, field: string, max: number): Record<string, string> {
  return value === undefined ? {} : { [field]: sized(value, field, 0, max) }
}

/** A KID as the device writes it: 32 lower-case hex digits. */
export function checkKid(kid: unknown, field = 'kid'): string {
  if (typeof kid !== 'string' || !/^[0-9a-f]{32}$/.test(kid))
    throw new CryptoInputError(`${field} must be a KID (32 lower-case hex digits)`)
  return kid
}

const msgField = (msg: unknown) => ({ msg: sized(msg, 'msg', 1, LIMITS.msg) })

function oneOf<A extends string>(value: unknown, allowed: readonly A[], field: string): A {
  if (!allowed.includes(value as A)) throw new CryptoInputError(`${field} must be one of ${allowed.join(', ')}`)
  return value as A
}

function digestField(alg: unknown): { alg?: T.Digest } {
  if (alg === undefined) return {}
  if (!isDigest(alg)) throw new CryptoInputError(`alg must be one of ${Object.keys(digests).join(', ')}`)
  return { alg }
}

/**
 * The peer fields of an ECDH mode: `ext_kid` or `pubkey`, not both; `required` when the
 * operation has no other mode.
 */
function peerFields(input: T.Peer, required: boolean): Record<string, string> {
  if (input.extKid !== undefined && input.pubkey !== undefined)
    throw new CryptoInputError('give the peer as extKid or pubkey, not both')
  if (input.extKid !== undefined) return { ext_kid: checkKid(input.extKid, 'extKid') }
  if (input.pubkey !== undefined) {
    const pubkey = bytesOf(input.pubkey, 'pubkey')
    if (!PEER_KEY_BYTES.has(pubkey.length))
      throw new CryptoInputError(
        `pubkey must be a raw X25519 (32 bytes) or X448 (56) key or a SEC1 point (33, 49, 67 compressed), ` +
          `not ${pubkey.length} bytes`,
      )
    return { pubkey: b64(pubkey) }
  }
  if (required) throw new CryptoInputError('the peer is needed: give extKid or pubkey')
  return {}
}

export function signBody(input: T.SignInput): Record<string, string> {
  const alg = oneOf(input.alg, SIGN_ALGS, 'alg')
  // RFC 8032's Ed25519ctx is undefined for an empty context.
  if (alg === 'Ed25519ctx' && (input.ctx === undefined || input.ctx.length === 0))
    throw new CryptoInputError('Ed25519ctx needs a context: ctx of 1 to 255 bytes')
  return { kid: checkKid(input.kid), alg, ...msgField(input.msg), ...optionalSized(input.ctx, 'ctx', LIMITS.signCtx) }
}

export function verifyBody(input: T.VerifyInput): Record<string, string> {
  return { ...signBody(input), sign: sized(input.signature, 'signature', 1, LIMITS.signature) }
}

export function hmacBody(input: T.HmacInput): Record<string, string> {
  const peer = peerFields(input, false)
  if (Object.keys(peer).length > 0 && input.alg === undefined)
    throw new CryptoInputError('an HMAC with a peer (ECDH mode) needs alg, the digest')
  return { kid: checkKid(input.kid), ...msgField(input.msg), ...digestField(input.alg), ...peer }
}

export function hmacVerifyBody(input: T.HmacVerifyInput): Record<string, string> {
  return { ...hmacBody(input), mac: sized(input.mac, 'mac', 1, LIMITS.mac) }
}

export function ecdhBody(input: T.EcdhInput): Record<string, string> {
  return { kid: checkKid(input.kid), ...peerFields(input, true), ...digestField(input.alg) }
}

/** Wrap takes 16 to 2048 bytes, unwrap what wrap made of them (8 more); both a multiple of 8 (RFC 3394). */
export function wrapBody(input: T.WrapInput, direction: 'wrap' | 'unwrap'): Record<string, string> {
  const min = direction === 'wrap' ? 16 : 24
  const msg = sized(input.msg, 'msg', min, LIMITS.msg + (direction === 'wrap' ? 0 : 8))
  if (input.msg.length % 8 !== 0) throw new CryptoInputError('msg must be a multiple of 8 bytes (RFC 3394)')
  return {
    kid: checkKid(input.kid),
    msg,
    ...(input.alg !== undefined ? { alg: oneOf(input.alg, WRAP_ALGS, 'alg') } : {}),
    ...peerFields(input, false),
    ...optionalSized(input.ctx, 'ctx', LIMITS.wrapCtx),
    ...(input.iv !== undefined ? { iv: sized(input.iv, 'iv', LIMITS.iv, LIMITS.iv) } : {}),
  }
}

const KEM_CIPHERTEXT_BYTES = [keyTypes.MLKEM512, keyTypes.MLKEM768, keyTypes.MLKEM1024].map((t) => t.ciphertext)

export function decapsBody(kid: string, ciphertext: Uint8Array): Record<string, string> {
  const ct = bytesOf(ciphertext, 'ciphertext')
  if (!(KEM_CIPHERTEXT_BYTES as number[]).includes(ct.length))
    throw new CryptoInputError(
      `ciphertext must be ${KEM_CIPHERTEXT_BYTES.join(', ')} bytes (ML-KEM-512, 768, 1024), not ${ct.length}`,
    )
  return { kid: checkKid(kid), ct: b64(ct) }
}

export function mlDsaSignBody(input: T.MlDsaSignInput): Record<string, string> {
  return { kid: checkKid(input.kid), ...msgField(input.msg), ...optionalSized(input.ctx, 'ctx', LIMITS.signCtx) }
}

export function mlDsaVerifyBody(input: T.MlDsaVerifyInput): Record<string, string> {
  return { ...mlDsaSignBody(input), sign: sized(input.signature, 'signature', 1, LIMITS.mlDsa) }
}

/** A create, import or derive body: `descr` in base64, `mode` as given (the device reads it). */
export function keySpecBody(input: T.KeySpec): Record<string, unknown> {
  const { descr, ...rest } = input
  return { ...rest, ...(descr !== undefined ? { descr: sized(descr, 'descr', 0, 64) } : {}) }
}

export function deriveBody(input: T.DeriveInput): Record<string, unknown> {
  const { kid, extKid, pubkey, ...spec } = input
  if (!isKeyType(spec.type) || !('derived' in keyTypes[spec.type]))
    throw new CryptoInputError(`type must be a derivable key type (not ML-KEM or ML-DSA), not ${String(spec.type)}`)
  return { kid: checkKid(kid), ...keySpecBody(spec), ...peerFields({ extKid, pubkey }, true) }
}
