import {
  decodeBase64,
  ExtAuthKeyError,
  ExtJwtError,
  hmacSha256,
  parseExtJwt,
  sameBytes,
  x25519Agree,
  type ParsedExtJwt,
} from '../../protocol/index.js'
import type { CloudReply, CloudRequest, CloudRoute } from '../types.js'
import type { EidRateLimit } from './eid-rate-limit.js'
import { MAX_JWT } from './notify-fields.js'
import type { NonceBook } from './nonce-book.js'
import { NotifyRefusal } from './notify-refusal.js'
import type { NotifyStore } from './notify-store.js'
import type { SessionKey, SessionKeys } from './session-keys.js'
import type { SubscriberBook } from './subscriber-book.js'

/** What every broker route works with. */
export interface NotifyContext {
  store: NotifyStore
  keys: SessionKeys
  subscribers: SubscriberBook
  /** Device nonces (timed, ±300 s) and app nonces (random), each good once. */
  deviceNonces: NonceBook
  appNonces: NonceBook
  registerRate: EidRateLimit
  eventRate: EidRateLimit
  /** The cloud's public base URL, without a trailing slash (links handed out). */
  publicUrl: string
  testMode: boolean
  random: (n: number) => Uint8Array
  /** Operator notices: public values only (a KID), never a key, MAC or JWT. */
  warn: (message: string) => void
}

/** A route whose refusals (thrown as NotifyRefusal) become their replies. */
export function route(
  method: CloudRoute['method'],
  pattern: string,
  handler: (req: CloudRequest) => Promise<CloudReply>,
): CloudRoute {
  return {
    method,
    pattern,
    handler: async (req) => {
      try {
        return await handler(req)
      } catch (error) {
        if (error instanceof NotifyRefusal) return error.reply()
        throw error
      }
    },
  }
}

/** X25519 of a broker key with a peer's public key; a peer that makes the all-zero secret is a bad field. */
export function agree(key: SessionKey, peer: Uint8Array, peerName: string): Uint8Array {
  try {
    return x25519Agree(key.privateKey, peer)
  } catch (error) {
    if (error instanceof ExtAuthKeyError) {
      throw new NotifyRefusal(400, 'bad_field', `${peerName}: not a usable X25519 public key`, {}, { cause: error })
    }
    throw error
  }
}

/** Whether `mac` is HMAC-SHA256(key, message), compared in constant time. */
export function macMatches(key: Uint8Array, message: Uint8Array | string, mac: Uint8Array): boolean {
  return sameBytes(hmacSha256(key, message), mac)
}

/** An eJWT's parts, not yet verified; a malformed one is a 400 naming the field. */
export function parseJwtField(text: string, name: string): ParsedExtJwt {
  try {
    return parseExtJwt(text, MAX_JWT)
  } catch (error) {
    if (error instanceof ExtJwtError) {
      throw new NotifyRefusal(400, 'bad_field', `${name}: not an HS256 eJWT`, {}, { cause: error })
    }
    throw error
  }
}

/** Whether a claim holds base64 (either alphabet) of exactly `bytes`. */
export function claimIs(claim: unknown, bytes: Uint8Array): boolean {
  const decoded = typeof claim === 'string' ? decodeBase64(claim) : undefined
  return decoded !== undefined && sameBytes(decoded, bytes)
}

/** The `ipinfo` objects of the contract: the caller's address only (no geolocation service, §6.12). */
export function ipinfo(ip: string): { city: string; country: string; ip: string } {
  return { city: '', country: '', ip }
}
