import { createHmac, timingSafeEqual } from 'node:crypto'
import { base64Field, decodeBase64 } from '../../protocol/index.js'
import { isLoginScope, LOGIN_SCOPE_MAX_BYTES } from './login-scope.js'
import { x25519 } from './x25519.js'

/** What went wrong with an eJWT; `status` is the HTTP answer the contract gives for it. */
export type EjwtErrorCode =
  | 'malformed'
  | 'bad_header'
  | 'bad_claims'
  | 'bad_signature'
  | 'expired'
  | 'bad_time'
  | 'wrong_audience'
  | 'unknown_jti'
  | 'unknown_key'

const BAD_REQUEST: ReadonlySet<EjwtErrorCode> = new Set(['malformed', 'bad_header', 'bad_claims'])

export class EjwtError extends Error {
  override readonly name = 'EjwtError'
  constructor(
    readonly code: EjwtErrorCode,
    message: string,
  ) {
    super(message)
  }

  /** 400 for a body or claims that are not well formed, 401 for anything that fails authentication. */
  get status(): 400 | 401 {
    return BAD_REQUEST.has(this.code) ? 400 : 401
  }
}

/** Longer eJWTs are refused before any decoding; a real one is a few hundred characters (init with its cfg more). */
export const EJWT_MAX_LENGTH = 4096

export interface ParsedEjwt {
  /** `header "." payload` exactly as received: the bytes the MAC covers. */
  signingInput: string
  payload: Record<string, unknown>
  mac: Uint8Array
}

const HEADER: Readonly<Record<string, string>> = { ecdh: 'x25519', alg: 'HS256', typ: 'JWT' }
const utf8 = new TextDecoder('utf-8', { fatal: true })

function jsonObjectPart(part: string, what: string): Record<string, unknown> {
  const bytes = decodeBase64(part)
  if (!bytes) throw new EjwtError('malformed', `the ${what} is not base64url`)
  let value: unknown
  try {
    value = JSON.parse(utf8.decode(bytes))
  } catch {
    throw new EjwtError('malformed', `the ${what} is not UTF-8 JSON`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EjwtError('malformed', `the ${what} is not a JSON object`)
  }
  return value as Record<string, unknown>
}

/** Splits and decodes an eJWT; checks structure and header only, not the MAC nor the claims. */
export function parseEjwt(text: unknown): ParsedEjwt {
  if (typeof text !== 'string') throw new EjwtError('malformed', 'the eJWT is not a string')
  if (text.length > EJWT_MAX_LENGTH)
    throw new EjwtError('malformed', `the eJWT is longer than ${EJWT_MAX_LENGTH} characters`)
  const parts = text.split('.')
  if (parts.length !== 3) throw new EjwtError('malformed', 'the eJWT does not have three parts')
  const [headerPart, payloadPart, macPart] = parts as [string, string, string]
  const header = jsonObjectPart(headerPart, 'header')
  const keys = Object.keys(header)
  if (keys.length !== 3 || keys.some((k) => !Object.hasOwn(HEADER, k) || header[k] !== HEADER[k])) {
    throw new EjwtError('bad_header', 'the header must be {"ecdh":"x25519","alg":"HS256","typ":"JWT"}')
  }
  const payload = jsonObjectPart(payloadPart, 'payload')
  const mac = decodeBase64(macPart)
  if (!mac || mac.length !== 32) throw new EjwtError('malformed', 'the MAC is not 32 bytes of base64url')
  return { signingInput: `${headerPart}.${payloadPart}`, payload, mac }
}

/**
 * Checks the MAC: HMAC-SHA256 keyed with X25519(session private, claimed public) over the
 * received header and payload text. Throws EjwtError `bad_signature`.
 */
export function verifyEjwt(parsed: ParsedEjwt, sessionPrivateKey: Uint8Array, claimedPublicKey: Uint8Array): void {
  let shared: Buffer
  try {
    shared = x25519(sessionPrivateKey, claimedPublicKey)
  } catch (err) {
    if (err instanceof RangeError) throw err
    // OpenSSL refuses low-order points (an all-zero shared secret): nobody can sign for those.
    throw new EjwtError('bad_signature', 'the eJWT signature does not verify')
  }
  const expected = createHmac('sha256', shared).update(parsed.signingInput, 'ascii').digest()
  shared.fill(0)
  if (parsed.mac.length !== expected.length || !timingSafeEqual(expected, parsed.mac))
    throw new EjwtError('bad_signature', 'the eJWT signature does not verify')
}

export interface ClaimsContext {
  /** The session public key exactly as the device sent it (`spk`). */
  spk: string
  /** Unix seconds. */
  now: number
  /** How far `iat` may lie in the past (default 60 s) and in the future (default 5 s). */
  iatPast?: number
  iatFuture?: number
}

interface CommonClaims {
  jti: string
  aud: string
  exp: number
  iat: number
  /** The signer's X25519 public key, decoded from `iss`. */
  iss: Uint8Array
}

export interface LoginClaims extends CommonClaims {
  scope: string
}

export interface InitClaims extends CommonClaims {
  cfg: Record<string, unknown>
}

function commonClaims(payload: Record<string, unknown>, ctx: ClaimsContext): CommonClaims {
  const { jti, aud, exp, iat, iss } = payload
  if (typeof jti !== 'string' || decodeBase64(jti)?.length !== 32)
    throw new EjwtError('bad_claims', '`jti` must be base64 of 32 bytes')
  if (typeof aud !== 'string') throw new EjwtError('bad_claims', '`aud` must be a string')
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new EjwtError('bad_claims', '`exp` must be a number')
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new EjwtError('bad_claims', '`iat` must be a number')
  const key = base64Field(iss)
  if (key?.length !== 32) throw new EjwtError('bad_claims', '`iss` must be base64 of a 32-byte X25519 public key')
  if (aud !== ctx.spk) throw new EjwtError('wrong_audience', "`aud` is not this session's key")
  if (exp < ctx.now) throw new EjwtError('expired', 'the eJWT has expired')
  if (iat < ctx.now - (ctx.iatPast ?? 60) || iat > ctx.now + (ctx.iatFuture ?? 5)) {
    throw new EjwtError('bad_time', '`iat` is too far from the device time')
  }
  return { jti, aud, exp, iat, iss: key }
}

/** The claims of a login eJWT (`POST /api/auth/token`). */
export function validateLoginClaims(payload: Record<string, unknown>, ctx: ClaimsContext): LoginClaims {
  const { scope } = payload
  if (!isLoginScope(scope))
    throw new EjwtError(
      'bad_claims',
      `\`scope\` must be 1 to ${LOGIN_SCOPE_MAX_BYTES} printable ASCII characters without spaces`,
    )
  return { ...commonClaims(payload, ctx), scope }
}

/** The claims of a personalisation eJWT (`POST /api/auth/init`); `cfg` is checked by its consumer. */
export function validateInitClaims(payload: Record<string, unknown>, ctx: ClaimsContext): InitClaims {
  const { cfg } = payload
  if (typeof cfg !== 'object' || cfg === null || Array.isArray(cfg))
    throw new EjwtError('bad_claims', '`cfg` must be an object')
  return { ...commonClaims(payload, ctx), cfg: cfg as Record<string, unknown> }
}
