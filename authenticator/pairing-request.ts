import { sha256 } from '@noble/hashes/sha2.js'
import { ExtJwtError, fixedBase64, parseExtJwt, sameBytes } from '../protocol/browser.js'
import { PairingError } from './pairing-error.js'

/** A device's pairing `request` (§2.4.1), read without verifying: the authenticator has no key for it yet. */
export interface PairingRequest {
  /** The JWT as received, for the QR hash check and nothing else. */
  text: string
  /** The claims as received: `jti` and `eat` are copied into the reply verbatim. */
  jti: string
  eat?: number
  exp?: number
  /** The device's identity key (`iss`) and the broker key the request names (`aud`). */
  eid: Uint8Array
  epk: Uint8Array
}

/** The QR's `hash` when a client has not computed one ([T]): no check then. */
export const HASH_NOT_IMPLEMENTED = 'not_implemented_yet'

/**
 * The checks of §4.1 step 1: a JWT with `jti`, `iss` and `aud`, not expired, and matching the QR's `hash`
 * when that is a real one. `now` is Unix seconds. A PairingError says what failed, never quoting the request.
 */
export function readPairingRequest(request: unknown, now: number, hash?: string): PairingRequest {
  let claims: Record<string, unknown>
  try {
    claims = parseExtJwt(request).payload
  } catch (err) {
    if (err instanceof ExtJwtError) throw new PairingError('the pairing request is not an eJWT', { cause: err })
    throw err
  }
  const text = request as string
  const eid = fixedBase64(claims.iss, 32)
  const epk = fixedBase64(claims.aud, 32)
  if (typeof claims.jti !== 'string' || claims.jti === '' || !eid || !epk)
    throw new PairingError('the pairing request lacks jti, iss or aud')
  const exp = optionalNumber(claims.exp, 'exp')
  const eat = optionalNumber(claims.eat, 'eat')
  if (exp !== undefined && exp <= now) throw new PairingError('the pairing request has expired')
  if (hash !== undefined && hash !== HASH_NOT_IMPLEMENTED) {
    const expected = fixedBase64(hash, 32)
    if (!expected || !sameBytes(expected, sha256(new TextEncoder().encode(text))))
      throw new PairingError("the pairing request does not match the QR code's hash")
  }
  return {
    text,
    jti: claims.jti,
    eid,
    epk,
    ...(exp === undefined ? {} : { exp }),
    ...(eat === undefined ? {} : { eat }),
  }
}

function optionalNumber(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new PairingError(`the pairing request's ${name} is no number`)
  return value
}
