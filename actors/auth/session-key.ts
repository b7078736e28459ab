import { verifyEjwt, type ParsedEjwt } from './ejwt.js'
import { x25519, x25519PublicKey } from './x25519.js'

/** The per-boot X25519 session key (`spk`): eJWTs and passphrase changes are keyed to it. */
export class SessionKey {
  readonly #privateKey: Uint8Array
  readonly publicKey: Uint8Array
  /** `spk` as the device sends it; eJWTs must name exactly this string as `aud`. */
  readonly spk: string

  constructor(random: (n: number) => Uint8Array) {
    this.#privateKey = random(32)
    this.publicKey = x25519PublicKey(this.#privateKey)
    this.spk = Buffer.from(this.publicKey).toString('base64')
  }

  /** Throws EjwtError `bad_signature` unless `claimedPublicKey`'s owner made the eJWT for this session. */
  verify(parsed: ParsedEjwt, claimedPublicKey: Uint8Array): void {
    verifyEjwt(parsed, this.#privateKey, claimedPublicKey)
  }

  /**
   * X25519 with a client's key: the HMAC key of a passphrase change. Undefined for a point of
   * small order, whose shared secret is all zeros whoever computes it, and for a key that is no
   * 32 bytes.
   */
  agree(publicKey: Uint8Array): Uint8Array | undefined {
    try {
      return new Uint8Array(x25519(this.#privateKey, publicKey))
    } catch {
      return undefined
    }
  }
}
