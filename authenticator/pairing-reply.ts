import {
  EXT_JWT_APP_HEADER,
  hmacSha256,
  signExtJwt,
  toBase64,
  x25519Agree,
  x25519Clamp,
  x25519PublicKey,
  type PairingReplyClaims,
} from '../protocol/browser.js'
import type { PairingRequest } from './pairing-request.js'

/** What the authenticator posts to the registration link (§3.5.1), with the key pair it made for it. */
export interface PairingReply {
  /** The clamped private key: kept sealed, never logged. */
  aidPrv: Uint8Array
  aid: Uint8Array
  body: { reply: string; fid: string; mac: string; aid: string }
}

/**
 * The reply of §4.1 step 3 (§2.4.2): a fresh key pair from `seed` (32 random bytes), `reply` signed with
 * S_pair = X25519(aid_prv, eid) in the app's header order, and the broker's `mac` = HMAC(S_ab, reply ‖ fid)
 * with S_ab = X25519(aid_prv, epk). Seed, label and fid are parameters so that the vectors reproduce.
 */
export function buildPairingReply(request: PairingRequest, seed: Uint8Array, label: string, fid: string): PairingReply {
  const aidPrv = x25519Clamp(seed)
  const aid = x25519PublicKey(aidPrv)
  const claims: PairingReplyClaims = {
    jti: request.jti,
    ...(request.eat === undefined ? {} : { eat: request.eat }),
    iss: toBase64(aid),
    aud: toBase64(request.eid),
    epk: toBase64(request.epk),
    label,
  }
  const reply = signExtJwt({ ...claims }, x25519Agree(aidPrv, request.eid), EXT_JWT_APP_HEADER)
  const mac = toBase64(hmacSha256(x25519Agree(aidPrv, request.epk), reply + fid))
  return { aidPrv, aid, body: { reply, fid, mac, aid: toBase64(aid) } }
}
