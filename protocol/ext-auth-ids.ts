import { sha1 } from '@noble/hashes/legacy.js'
import { fromBase64, toBase64 } from './web-base64.js'

/** What a pairing's key `descr` starts with: raw bytes `EXTAID` ‖ pid (contract §1.2). */
export const EXTAID = 'EXTAID'
export const EXT_AUTH_MAX_PAIRINGS = 8
/** The periods the family's app offers for a token, seconds; the first is its default (contract §2.4.4). */
export const EXT_PERIODS = [900, 3600, 28800, 86400] as const
/** Lifetimes, seconds (contract §3.7): a pairing `request`, an `authreq`, and an `authreq` for `keymgmt:use:*`. */
export const PAIRING_REQUEST_LIFETIME = 86400
export const AUTHREQ_LIFETIME = 3600
export const AUTHREQ_KEY_USE_LIFETIME = 900

const EXTAID_BYTES = new TextEncoder().encode(EXTAID)
const PID_BYTES = 32

/** A pid in a URL path: base64url without padding, character for character (contract §2.1). */
export function pidx(pid: string): string {
  return pid.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')
}

/** The pid of a `pidx`: standard base64, padded. */
export function pidOfPidx(value: string): string {
  const std = value.replaceAll('-', '+').replaceAll('_', '/')
  return std + '='.repeat((4 - (std.length % 4)) % 4)
}

/** A paired authenticator's KID: hex of the first 16 bytes of SHA-1(aid), as for any imported public key. */
export function extAuthKid(aid: Uint8Array): string {
  return Array.from(sha1(aid).subarray(0, 16), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** An ExtAuth bearer's `sub`: the 16 KID bytes in base64 (24 characters). */
export function extAuthSub(kid: string): string {
  if (!/^[0-9a-f]{32}$/.test(kid)) throw new RangeError('a KID is 32 lower-case hex digits')
  return toBase64(Uint8Array.from(kid.match(/../g)!, (pair) => parseInt(pair, 16)))
}

export function pairingDescr(pid: Uint8Array): Uint8Array {
  if (pid.length !== PID_BYTES) throw new RangeError('a pid is 32 bytes')
  const descr = new Uint8Array(EXTAID_BYTES.length + PID_BYTES)
  descr.set(EXTAID_BYTES)
  descr.set(pid, EXTAID_BYTES.length)
  return descr
}

/** The pid of a pairing's `descr`; undefined for any other descr. */
export function pidOfDescr(descr: Uint8Array): Uint8Array | undefined {
  if (descr.length !== EXTAID_BYTES.length + PID_BYTES) return undefined
  if (!EXTAID_BYTES.every((byte, i) => descr[i] === byte)) return undefined
  return descr.slice(EXTAID_BYTES.length)
}

/**
 * The text sealed for the app when a scope names a key (contract §1.4): the scope, `#`, and base64 of
 * JSON `{"t": the type word as 4 lower-case hex digits, "l": the key's label}`.
 */
export function keyHintScope(scope: string, typeWord: number, label: string): string {
  if (!Number.isInteger(typeWord) || typeWord < 0 || typeWord > 0xffff) throw new RangeError('a type word is 16 bits')
  const hint = JSON.stringify({ t: typeWord.toString(16).padStart(4, '0'), l: label })
  return `${scope}#${toBase64(new TextEncoder().encode(hint))}`
}

/** The bytes of a base64 field of exactly `length` bytes (either alphabet, padded or not); undefined otherwise. */
export function fixedBase64(value: unknown, length: number): Uint8Array | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined
  try {
    const bytes = fromBase64(value)
    return bytes.length === length ? bytes : undefined
  } catch {
    return undefined
  }
}
