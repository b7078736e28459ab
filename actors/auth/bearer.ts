import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { BEARER_HEADER, type BearerClaims } from '../../protocol/index.js'

/** Upper bound of a login token's lifetime, whatever `exp` the client asked for. */
export const LOGIN_MAX_LIFETIME = 24 * 3600
/** The `system:config` token handed out by personalisation lives this long. */
export const INIT_TOKEN_LIFETIME = 8 * 3600

export interface BearerIssuerOptions {
  /** The device's random source, for the token ids. */
  random(n: number): Uint8Array
  /** Seconds; default LOGIN_MAX_LIFETIME. */
  maxLifetime?: number
}

/**
 * Mints the device's bearer tokens, signed with an Ed25519 key made at each boot: every token
 * dies with the process. Only the public key leaves the object (in the identity read model),
 * so any service can verify a token (protocol/bearer-token.ts) and none but this one can mint one.
 */
export class BearerIssuer {
  // A private field of a KeyObject: not enumerable, not serialised, not shown by inspect.
  readonly #signingKey: KeyObject
  readonly #random: (n: number) => Uint8Array
  readonly #maxLifetime: number
  /** Raw 32 bytes, base64url. */
  readonly publicKey: string

  constructor(options: BearerIssuerOptions) {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    this.#signingKey = privateKey
    this.publicKey = publicKey.export({ format: 'jwk' }).x!
    this.#random = options.random
    this.#maxLifetime = options.maxLifetime ?? LOGIN_MAX_LIFETIME
  }

  /**
   * `exp` is what the client asked for, clamped to [now + 1, now + maxLifetime]; times are Unix seconds. `ctx`, when
   * given, rides along for the client (an external authenticator's, ext-auth contract §1.5): no service reads it.
   */
  mint(request: { scope: string; sub: string; exp: number; ctx?: string }, now: number): string {
    if (!Number.isFinite(request.exp) || !Number.isFinite(now)) throw new RangeError('exp and now must be finite')
    const iat = Math.floor(now)
    const exp = Math.min(Math.max(Math.floor(request.exp), iat + 1), iat + this.#maxLifetime)
    const jti = Buffer.from(this.#random(16)).toString('base64url')
    const claims: BearerClaims & { ctx?: string } = {
      scope: request.scope,
      sub: request.sub,
      iat,
      exp,
      jti,
      ...(request.ctx !== undefined ? { ctx: request.ctx } : {}),
    }
    const signingInput = `${BEARER_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
    return `${signingInput}.${sign(null, Buffer.from(signingInput, 'ascii'), this.#signingKey).toString('base64url')}`
  }
}
