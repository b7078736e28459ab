import { hmacSha256, sameBytes } from './ext-auth-crypto.js'
import { fromBase64, toBase64Url } from './web-base64.js'

/** The header the device writes, in the firmware's key order (contract §2.3). */
export const EXT_JWT_DEVICE_HEADER = '{"ecdh":"x25519","typ":"JWT","alg":"HS256"}'
/** The header the family's authenticator app writes. */
export const EXT_JWT_APP_HEADER = '{"ecdh":"x25519","alg":"HS256","typ":"JWT"}'
/** Longer texts are refused before any decoding: a real one is a few hundred characters. */
export const EXT_JWT_MAX_LENGTH = 4096

/** `malformed`: not three base64url parts of JSON objects with a 32-byte MAC; `bad_header`: not HS256 over X25519. */
export class ExtJwtError extends Error {
  override readonly name = 'ExtJwtError'
  constructor(
    readonly code: 'malformed' | 'bad_header',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export interface ParsedExtJwt {
  header: Record<string, unknown>
  payload: Record<string, unknown>
  /** `header "." payload` exactly as received: what the MAC covers, never a re-serialisation. */
  signingInput: string
  mac: Uint8Array
}

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const SEGMENT = /^[A-Za-z0-9_+/-]+={0,2}$/

/** An eJWT (contract §2.3): `payload` as JSON.stringify writes it, the MAC over the ASCII of the first two parts. */
export function signExtJwt(payload: Record<string, unknown>, key: Uint8Array, header = EXT_JWT_DEVICE_HEADER): string {
  const signingInput = extJwtSigningInput(payload, header)
  return `${signingInput}.${toBase64Url(hmacSha256(key, signingInput))}`
}

/** What an eJWT's MAC covers: `b64url(header) "." b64url(payload)`, for a signer whose HMAC key is not in JS. */
export function extJwtSigningInput(payload: Record<string, unknown>, header: string): string {
  return `${toBase64Url(utf8.encode(header))}.${toBase64Url(utf8.encode(JSON.stringify(payload)))}`
}

function segmentBytes(part: string, what: string): Uint8Array {
  if (!SEGMENT.test(part)) throw new ExtJwtError('malformed', `the ${what} is not base64url`)
  try {
    return fromBase64(part)
  } catch (err) {
    throw new ExtJwtError('malformed', `the ${what} is not base64url`, { cause: err })
  }
}

function jsonObject(part: string, what: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(strictUtf8.decode(segmentBytes(part, what)))
  } catch (err) {
    if (err instanceof ExtJwtError) throw err
    throw new ExtJwtError('malformed', `the ${what} is not UTF-8 JSON`, { cause: err })
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ExtJwtError('malformed', `the ${what} is not a JSON object`)
  return value as Record<string, unknown>
}

/**
 * Splits and decodes an eJWT, checking its shape and header only (not its MAC nor its claims): three
 * base64url parts, a header with `alg` HS256 (and `ecdh` x25519 when named) in any key order, a 32-byte MAC.
 */
export function parseExtJwt(text: unknown, maxLength = EXT_JWT_MAX_LENGTH): ParsedExtJwt {
  if (typeof text !== 'string') throw new ExtJwtError('malformed', 'the eJWT is not a string')
  if (text.length > maxLength) throw new ExtJwtError('malformed', `the eJWT is longer than ${maxLength} characters`)
  const parts = text.split('.')
  if (parts.length !== 3) throw new ExtJwtError('malformed', 'the eJWT does not have three parts')
  const [headerPart, payloadPart, macPart] = parts as [string, string, string]
  const header = jsonObject(headerPart, 'header')
  if (header.alg !== 'HS256' || ('ecdh' in header && header.ecdh !== 'x25519'))
    throw new ExtJwtError('bad_header', 'the header must name alg HS256 (and ecdh x25519)')
  const payload = jsonObject(payloadPart, 'payload')
  const mac = segmentBytes(macPart, 'MAC')
  if (mac.length !== 32) throw new ExtJwtError('malformed', 'the MAC is not 32 bytes')
  return { header, payload, signingInput: `${headerPart}.${payloadPart}`, mac }
}

/** The MAC is HMAC-SHA256 with `key` over the received first two parts; compared in constant time. */
export function extJwtSigned(parsed: ParsedExtJwt, key: Uint8Array): boolean {
  return sameBytes(hmacSha256(key, parsed.signingInput), parsed.mac)
}
