import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'

export interface BearerClaims {
  scope: string
  /** `U`, `M` or an external authenticator's id. */
  sub: string
  iat: number
  exp: number
  jti: string
}

/** Upper bound of a login token's lifetime, whatever `exp` the client asked for. */
export const LOGIN_MAX_LIFETIME = 24 * 3600
/** The `system:config` token handed out by personalisation lives this long. */
export const INIT_TOKEN_LIFETIME = 8 * 3600

const HEADER = Buffer.from('{"typ":"JWT","alg":"HS256"}').toString('base64url')
// Far above any token we mint; refuses junk before hashing it.
const MAX_TOKEN_LENGTH = 2048

export interface BearerIssuerOptions {
  /** The device's random source; the issuer draws its 32-byte secret and the token ids from it. */
  random(n: number): Uint8Array
  /** Seconds; default LOGIN_MAX_LIFETIME. */
  maxLifetime?: number
}

/**
 * Mints and verifies the device's HS256 bearer tokens. The secret is drawn once per boot and
 * never leaves the object, so every token dies with the process.
 */
export class BearerIssuer {
  // A private field of a KeyObject: not enumerable, not serialised, not shown by inspect.
  readonly #secret: KeyObject
  readonly #random: (n: number) => Uint8Array
  readonly #maxLifetime: number

  constructor(options: BearerIssuerOptions) {
    const secret = options.random(32)
    if (secret.length !== 32) throw new RangeError('the bearer secret must be 32 bytes')
    this.#secret = createSecretKey(secret)
    secret.fill(0)
    this.#random = options.random
    this.#maxLifetime = options.maxLifetime ?? LOGIN_MAX_LIFETIME
  }

  #mac(signingInput: string): Buffer {
    return createHmac('sha256', this.#secret).update(signingInput, 'ascii').digest()
  }

  /** `exp` is what the client asked for, clamped to [now + 1, now + maxLifetime]; times are Unix seconds. */
  mint(request: { scope: string; sub: string; exp: number }, now: number): string {
    if (!Number.isFinite(request.exp) || !Number.isFinite(now)) throw new RangeError('exp and now must be finite')
    const iat = Math.floor(now)
    const exp = Math.min(Math.max(Math.floor(request.exp), iat + 1), iat + this.#maxLifetime)
    const jti = Buffer.from(this.#random(16)).toString('base64url')
    const claims: BearerClaims = { scope: request.scope, sub: request.sub, iat, exp, jti }
    const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
    return `${signingInput}.${this.#mac(signingInput).toString('base64url')}`
  }

  /** The claims of a token this issuer minted and that is still valid at `now`, else undefined. */
  verify(token: unknown, now: number): BearerClaims | undefined {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return undefined
    const parts = token.split('.')
    if (parts.length !== 3 || parts[0] !== HEADER) return undefined
    const [, payloadPart, macPart] = parts as [string, string, string]
    const mac = Buffer.from(macPart, 'base64url')
    if (mac.length !== 32 || mac.toString('base64url') !== macPart) return undefined
    if (!timingSafeEqual(mac, this.#mac(`${HEADER}.${payloadPart}`))) return undefined
    // Authentic, so the payload is one we serialised: only expiry is left to check.
    const claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as BearerClaims
    return now < claims.exp ? claims : undefined
  }
}
