// A device of the approvals load (cloud-approvals.ts), simulated with the protocol core: its X25519 identity in
// memory instead of an enclave, each secret agreed once per peer, and the device's own checks made here as hemd makes
// them (S_db signs its requests; an authreply is taken signed with S_pair, its scope opened, for the request it
// answers: cloud-approvals.ts compares the jti), without hemd's key store, journal or bearer token.
import { randomBytes } from 'node:crypto'
import {
  extAuthKid,
  extJwtSigned,
  fromBase64,
  hmacSha256,
  openScope,
  parseExtJwt,
  sealScope,
  signExtJwt,
  toBase64,
  x25519Agree,
  x25519Clamp,
  x25519PublicKey,
} from '../protocol/index.js'

/** A nonce or jti of the contract: 4 bytes of Unix time, little-endian, then 28 random bytes. */
function timedNonce(now: number): Uint8Array {
  const nonce = new Uint8Array(randomBytes(32))
  new DataView(nonce.buffer).setUint32(0, now, true)
  return nonce
}

export class SimulatedDevice {
  private readonly eidPrv = x25519Clamp(new Uint8Array(randomBytes(32)))
  readonly eid = toBase64(x25519PublicKey(this.eidPrv))
  /** The pairing: its pid and S_pair. */
  private pairing: { pid: string; sPair: Uint8Array } | undefined

  /** Secrets by peer key: the broker's key lives a day, the phone's as long as the pairing. */
  private readonly secrets = new Map<string, Uint8Array>()

  /** X25519 with a peer, agreed once per peer (a device agrees again each time; the load generator must not). */
  private agree(publicKey: string): Uint8Array {
    let secret = this.secrets.get(publicKey)
    if (!secret) this.secrets.set(publicKey, (secret = x25519Agree(this.eidPrv, fromBase64(publicKey))))
    return secret
  }

  /** ext/init: the pairing request for the broker's eid-bound key `epk`. */
  init(epk: string, now: number): string {
    const jti = toBase64(timedNonce(now))
    return signExtJwt({ jti, exp: now + 86_400, aud: epk, iss: this.eid }, this.agree(epk))
  }

  /** ext/validate: the phone's reply checked with S_pair, the pairing kept; `{kid, code}` for the broker. */
  validate(epk: string, pid: string, reply: string): { kid: string; code: string } {
    const { payload } = parseExtJwt(reply)
    const sPair = this.agree(payload.iss as string)
    if (!extJwtSigned(parseExtJwt(reply), sPair)) throw new Error('the pairing reply is not signed with S_pair')
    this.pairing = { pid, sPair }
    const code = toBase64(hmacSha256(this.agree(epk), reply))
    return { kid: extAuthKid(fromBase64(payload.iss as string)), code }
  }

  /** ext/request: the scope sealed for the pairing, signed for the anonymous key `epk`; its jti. */
  request(epk: string, scope: string, now: number): { authreq: string; epk: string; jti: string } {
    const { pid, sPair } = this.pairing!
    const jti = timedNonce(now)
    const claims = { iss: this.eid, aud: epk, iat: now, exp: now + 3600, jti: toBase64(jti), scope: {} }
    claims.scope = { [pid]: sealScope(scope, sPair, jti) }
    return { authreq: signExtJwt(claims, this.agree(epk)), epk, jti: claims.jti }
  }

  /** ext/token's checks of an authreply: signed with S_pair, its scope opened. Its jti and scope. */
  opened(authreply: string): { jti: string; scope: string } {
    const parsed = parseExtJwt(authreply)
    const { jti, scope } = parsed.payload as { jti: string; scope: string }
    const { sPair } = this.pairing!
    const granted = openScope(scope, sPair, fromBase64(jti))
    if (!extJwtSigned(parsed, sPair) || granted === undefined)
      throw new Error('the authreply is not signed with S_pair')
    return { jti, scope: granted }
  }
}
