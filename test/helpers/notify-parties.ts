// The device's and the app's side of the external-authenticator crypto (contract §2), built on the shared
// core, so that the broker's tests make real `request`, `reply`, `authreq`, `authreply` and proofs.

import { randomBytes } from 'node:crypto'
import {
  decodeBase64,
  encodeBase64,
  EXT_JWT_APP_HEADER,
  extAuthKid,
  hmacSha256,
  openScope,
  parseExtJwt,
  sealScope,
  signExtJwt,
  x25519Agree,
  x25519Clamp,
  x25519PublicKey,
} from '../../protocol/index.js'

const bytes = (text: string): Uint8Array => decodeBase64(text)!
const b64 = encodeBase64

/** A timed nonce or jti: 4 bytes of Unix time, little-endian, then 28 random bytes. */
export function timedNonce(now: number): Uint8Array {
  const nonce = new Uint8Array(randomBytes(32))
  new DataView(nonce.buffer).setUint32(0, now, true)
  return nonce
}

export class TestDevice {
  readonly eidPrv = x25519Clamp(new Uint8Array(randomBytes(32)))
  readonly eid = b64(x25519PublicKey(this.eidPrv))
  /** The pairing book: jti → epk. */
  private readonly book = new Map<string, string>()

  sDb(epk: string): Uint8Array {
    return x25519Agree(this.eidPrv, bytes(epk))
  }

  /** `ext/init`: the pairing request for the broker key `epk`. */
  init(epk: string, now: number, exp = now + 86_400): { request: string; eid: string } {
    const jti = b64(timedNonce(now))
    this.book.set(jti, epk)
    return { request: signExtJwt({ jti, exp, aud: epk, iss: this.eid }, this.sDb(epk)), eid: this.eid }
  }

  /** `ext/validate`: `{kid, code}` for a phone's reply (the device's own checks are not the broker's to test). */
  validate(reply: string): { kid: string; code: string } {
    const { payload } = parseExtJwt(reply)
    const epk = this.book.get(payload.jti as string)!
    return { kid: extAuthKid(bytes(payload.iss as string)), code: b64(hmacSha256(this.sDb(epk), reply)) }
  }

  /** `ext/request`: the scope sealed for each pairing `{pid, aid}`, signed for the anonymous key `epk`. */
  request(epk: string, scope: string, pairings: Array<{ pid: string; aid: string }>, now: number) {
    const jti = timedNonce(now)
    const sealed = Object.fromEntries(
      pairings.map(({ pid, aid }) => [pid, sealScope(scope, x25519Agree(this.eidPrv, bytes(aid)), jti)]),
    )
    const claims = { iss: this.eid, aud: epk, iat: now, exp: now + 3600, jti: b64(jti), scope: sealed }
    return { authreq: signExtJwt(claims, this.sDb(epk)), epk }
  }

  /** `ext/mac`: the proof before `subscribers/*`. */
  mac(epk: string, now: number): { nonce: string; mac: string; eid: string } {
    const nonce = timedNonce(now)
    return { nonce: b64(nonce), mac: b64(hmacSha256(this.sDb(epk), nonce)), eid: this.eid }
  }
}

export class TestApp {
  readonly aidPrv = x25519Clamp(new Uint8Array(randomBytes(32)))
  readonly aid = b64(x25519PublicKey(this.aidPrv))

  sPair(eid: string): Uint8Array {
    return x25519Agree(this.aidPrv, bytes(eid))
  }

  sAb(epk: string): Uint8Array {
    return x25519Agree(this.aidPrv, bytes(epk))
  }

  /** The pairing POST body for the request behind a registration link. */
  reply(request: string, fid = 'none', label = 'Pixel 8 (Android)') {
    const { jti, iss: eid, aud: epk } = parseExtJwt(request).payload as Record<string, string>
    const claims = { jti, iss: this.aid, aud: eid!, epk: epk!, label }
    const reply = signExtJwt(claims, this.sPair(eid!), EXT_JWT_APP_HEADER)
    return { reply, fid, mac: b64(hmacSha256(this.sAb(epk!), reply + fid)), aid: this.aid }
  }

  /** The scope of an event's entry, opened; undefined when it is not this app's. */
  open(data: { jti: string; scope: string }, eid: string): string | undefined {
    return openScope(data.scope, this.sPair(eid), bytes(data.jti))
  }

  /** The allow POST body: the scope sealed again, signed with S_pair, proved with S_ab; `change` alters claims. */
  authreply(
    data: { jti: string; scope: string; epk: string },
    eid: string,
    pid: string,
    now: number,
    period = 900,
    change = {},
  ) {
    const granted = sealScope(this.open(data, eid)!, this.sPair(eid), bytes(data.jti))
    const claims = {
      aud: eid,
      jti: data.jti,
      exp: now + period,
      iat: now,
      pid,
      iss: this.aid,
      scope: granted,
      ...change,
    }
    const authreply = signExtJwt(claims, this.sPair(eid), EXT_JWT_APP_HEADER)
    return { authreply, mac: b64(hmacSha256(this.sAb(data.epk), authreply)) }
  }

  /** The app-proof of `subscribers/delete` with the aid-bound key `epk`. */
  unpair(pid: string, epk: string) {
    const nonce = randomBytes(32)
    return { pid, epk, nonce: b64(nonce), mac: b64(hmacSha256(this.sAb(epk), nonce)), aid: this.aid }
  }

  /** `subscribers/token`: a new push token, proved with the aid-bound key `epk`. */
  token(pid: string, epk: string, fid: string) {
    const nonce = randomBytes(32)
    const mac = hmacSha256(this.sAb(epk), new Uint8Array([...nonce, ...Buffer.from(fid, 'utf8')]))
    return { pid, aid: this.aid, fid, nonce: b64(nonce), mac: b64(mac) }
  }
}
