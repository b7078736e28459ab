// The field shapes of the external authenticator's messages (ext-auth-contract §2.1), checked on
// what a client sends and on what the device and the broker answer before anything is used.
import { ExtJwtError, parseExtJwt } from '../protocol/browser.js'

/** 32 bytes in base64: standard and padded as the device and broker write them, url-safe or unpadded accepted. */
const B64_32 = /^[A-Za-z0-9+/_-]{42}[AEIMQUYcgkosw048]=?$/

export function isKey32(value: unknown): value is string {
  return typeof value === 'string' && B64_32.test(value)
}

/** An eJWT of §2.3 (three base64url parts, JSON header and payload, HS256, a 32-byte MAC); its MAC is not checked. */
export function isExtJwt(value: unknown): value is string {
  try {
    parseExtJwt(value)
    return true
  } catch (err) {
    if (err instanceof ExtJwtError) return false
    throw err
  }
}

/** A broker id put in a URL path (rid, eventid): nothing that could leave its path segment. */
export function isPathId(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(value)
}

export const isUnixTime = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
