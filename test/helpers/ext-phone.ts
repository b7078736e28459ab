// The external authenticator's side of contract §1 for the device's tests, built on the shared ext-auth core: a
// phone with its X25519 key and pid, a broker key, the pairing and approval messages the device reads.
import { randomBytes } from 'node:crypto'
import {
  EXT_JWT_APP_HEADER,
  fromBase64,
  openScope,
  parseExtJwt,
  sealScope,
  signExtJwt,
  toBase64,
  x25519Agree,
  x25519PublicKey,
} from '../../protocol/index.js'
import { call, type Answer } from './http.js'
import { bearer } from './owner.js'

export interface Phone {
  aidPrv: Uint8Array
  aid: string
  pid: string
}

export interface BrokerKey {
  prv: Uint8Array
  epk: string
}

export function newPhone(): Phone {
  const aidPrv = new Uint8Array(randomBytes(32))
  return { aidPrv, aid: toBase64(x25519PublicKey(aidPrv)), pid: toBase64(randomBytes(32)) }
}

export function brokerKey(): BrokerKey {
  const prv = new Uint8Array(randomBytes(32))
  return { prv, epk: toBase64(x25519PublicKey(prv)) }
}

/** S_pair as the phone computes it, from the eid a device message names. */
export function phoneSecret(phone: Phone, eid: string): Uint8Array {
  return x25519Agree(phone.aidPrv, fromBase64(eid))
}

export function post(base: string, path: string, body: unknown, token?: string): Promise<Answer> {
  return call(`${base}/api/auth/ext/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? bearer(token) : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

export const payloadOf = (jwt: string) => parseExtJwt(jwt).payload

/** The phone's `reply` to a device's pairing `request` (contract §2.4.2), signed with S_pair. */
export function pairingReply(phone: Phone, request: string, label = 'Pixel 8 (Android)'): string {
  const { jti, iss, aud } = payloadOf(request) as { jti: string; iss: string; aud: string }
  const claims = { jti, iss: phone.aid, aud: iss, epk: aud, label }
  return signExtJwt(claims, phoneSecret(phone, iss), EXT_JWT_APP_HEADER)
}

/** ext/init then ext/validate with the phone's reply: the validate answer. */
export async function pair(base: string, token: string, phone: Phone, label?: string): Promise<Answer> {
  const init = await post(base, 'init', { epk: brokerKey().epk }, token)
  if (init.status !== 200) throw new Error(`ext/init: ${init.status} ${init.text}`)
  return post(base, 'validate', { pid: phone.pid, reply: pairingReply(phone, init.json.request, label) }, token)
}

/** What the phone opens of an authreq's entry for it, or undefined when it has none (or it does not open). */
export function openedScope(phone: Phone, authreq: string): string | undefined {
  const { iss, jti, scope } = payloadOf(authreq) as { iss: string; jti: string; scope: Record<string, string> }
  return openScope(scope[phone.pid], phoneSecret(phone, iss), fromBase64(jti))
}

export interface Approval {
  /** What the phone seals as granted; default the scope it opened. */
  grant?: (opened: string) => string
  /** The authreply's `exp`; default now + 900. */
  exp?: number
  /** The device it is for (its `aud` and S_pair); default the authreq's `iss`. */
  eid?: string
  ctx?: string
}

/** The phone's `authreply` allowing an authreq (contract §2.4.4), signed with S_pair. */
export function authreply(phone: Phone, authreq: string, o: Approval = {}): string {
  const { iss, jti } = payloadOf(authreq) as { iss: string; jti: string }
  const opened = openedScope(phone, authreq)
  const sPair = phoneSecret(phone, o.eid ?? iss)
  if (opened === undefined) throw new Error('the authreq has no entry for this phone')
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    aud: o.eid ?? iss,
    jti,
    exp: o.exp ?? now + 900,
    iat: now,
    pid: phone.pid,
    iss: phone.aid,
    scope: sealScope(o.grant ? o.grant(opened) : opened, sPair, fromBase64(jti)),
    ...(o.ctx !== undefined ? { ctx: o.ctx } : {}),
  }
  return signExtJwt(claims, sPair, EXT_JWT_APP_HEADER)
}
