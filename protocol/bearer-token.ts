import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto'
import type { Principal } from './bus-messages.js'

/** What a bearer token says: whose it is, what it may do, until when (Unix seconds). */
export interface BearerClaims extends Principal {
  iat: number
  exp: number
  jti: string
}

/** Every bearer token starts with exactly these bytes: base64url of `{"typ":"JWT","alg":"EdDSA"}`. */
export const BEARER_HEADER = Buffer.from('{"typ":"JWT","alg":"EdDSA"}').toString('base64url')
// Far above any token the auth service mints; refuses junk before it is decoded.
const MAX_BEARER_LENGTH = 2048
const SIGNATURE_BYTES = 64
const PUBLIC_KEY_BYTES = 32
const BASE64URL = /^[A-Za-z0-9_-]+$/

/** The Ed25519 check; injectable so that a test can count how often the cache let it be skipped. */
export type SignatureCheck = (signingInput: Buffer, signature: Buffer, key: KeyObject) => boolean

const ed25519: SignatureCheck = (data, signature, key) => verifySignature(null, data, key, signature)

export interface BearerVerifierOptions {
  /** Unix seconds. */
  now(): number
  /** Verified tokens kept at most; the oldest goes first. */
  maxEntries?: number
  check?: SignatureCheck
}

/**
 * Checks the device's bearer tokens with the auth service's published public key, so that every
 * service decides for itself who is asking: nobody's word on the bus is taken for it. A verified
 * token's claims are kept until it expires, so a token costs one signature check per service;
 * a new public key (the auth service restarted, its tokens died with it) empties the cache.
 */
export class BearerVerifier {
  readonly #cache = new Map<string, BearerClaims>()
  readonly #now: () => number
  readonly #maxEntries: number
  readonly #check: SignatureCheck
  #publicKey: string | undefined
  #key: KeyObject | undefined

  constructor(options: BearerVerifierOptions) {
    this.#now = options.now
    this.#maxEntries = options.maxEntries ?? 4096
    this.#check = options.check ?? ed25519
  }

  /**
   * The claims of `token` if `publicKey` (base64url, raw 32 bytes) signed it and it has not expired; else undefined.
   */
  verify(token: string, publicKey: string): BearerClaims | undefined {
    if (publicKey !== this.#publicKey) this.#follow(publicKey)
    const now = this.#now()
    const known = this.#cache.get(token)
    if (known) {
      if (now < known.exp) return known
      this.#cache.delete(token)
      return undefined
    }
    const claims = this.#key && verified(token, this.#key, this.#check)
    if (!claims || now >= claims.exp) return undefined
    if (this.#cache.size >= this.#maxEntries) this.#cache.delete(this.#cache.keys().next().value!)
    this.#cache.set(token, claims)
    return claims
  }

  #follow(publicKey: string): void {
    this.#cache.clear()
    this.#publicKey = publicKey
    this.#key = undefined
    if (!canonicalBase64url(publicKey, PUBLIC_KEY_BYTES)) return
    try {
      this.#key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' })
    } catch {
      // Not a point on the curve: no token verifies under it.
    }
  }
}

/** The claims of a token whose signature `key` made, parsed strictly; undefined for anything else. */
function verified(token: unknown, key: KeyObject, check: SignatureCheck): BearerClaims | undefined {
  if (typeof token !== 'string' || token.length > MAX_BEARER_LENGTH) return undefined
  const parts = token.split('.')
  if (parts.length !== 3 || parts[0] !== BEARER_HEADER) return undefined
  const [, payload, signature] = parts as [string, string, string]
  if (!canonicalBase64url(payload) || !canonicalBase64url(signature, SIGNATURE_BYTES)) return undefined
  if (!check(Buffer.from(`${BEARER_HEADER}.${payload}`, 'ascii'), Buffer.from(signature, 'base64url'), key))
    return undefined
  return claimsOf(Buffer.from(payload, 'base64url').toString('utf8'))
}

/** Only what a token must say, with the types it must have: a signed payload is still checked for shape. */
function claimsOf(json: string): BearerClaims | undefined {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { sub, scope, iat, exp, jti } = value as Record<string, unknown>
  if (typeof sub !== 'string' || typeof scope !== 'string' || typeof jti !== 'string') return undefined
  if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp)) return undefined
  return Object.freeze({ sub, scope, iat: iat as number, exp: exp as number, jti })
}

/** Unpadded base64url that decodes to `bytes` bytes (any when absent) and encodes back to itself. */
function canonicalBase64url(text: string, bytes?: number): boolean {
  if (!BASE64URL.test(text)) return false
  const decoded = Buffer.from(text, 'base64url')
  return (bytes === undefined || decoded.length === bytes) && decoded.toString('base64url') === text
}
