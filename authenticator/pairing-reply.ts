import { toBase64, type PairingReplyClaims } from '../protocol/browser.js'
import type { AidKey } from './aid-key.js'
import type { PairingRequest } from './pairing-request.js'
import { signExtJwtWith } from './sign-ext-jwt-with.js'

/** What the authenticator posts to the registration link (§3.5.1). */
export interface PairingReply {
  reply: string
  fid: string
  mac: string
  aid: string
}

/**
 * The reply of §4.1 step 3 (§2.4.2) for a fresh key: `reply` signed with S_pair = X25519(aid_prv, eid) in the
 * app's header order, and the broker's `mac` = HMAC(S_ab, reply ‖ fid) with S_ab = X25519(aid_prv, epk). Key,
 * label and fid are parameters so that the vectors reproduce.
 */
export async function buildPairingReply(
  request: PairingRequest,
  key: AidKey,
  label: string,
  fid: string,
): Promise<PairingReply> {
  const claims: PairingReplyClaims = {
    jti: request.jti,
    ...(request.eat === undefined ? {} : { eat: request.eat }),
    iss: toBase64(key.aid),
    aud: toBase64(request.eid),
    epk: toBase64(request.epk),
    label,
  }
  const reply = await signExtJwtWith(await key.agree(request.eid), { ...claims })
  const sAb = await key.agree(request.epk)
  const mac = toBase64(await sAb.hmac(new TextEncoder().encode(reply + fid)))
  return { reply, fid, mac, aid: toBase64(key.aid) }
}
