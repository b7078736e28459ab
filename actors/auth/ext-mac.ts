import { type CommandReply, type CommandRequest, hmacSha256, toBase64 } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { timedNonce } from './challenges.js'
import { brokerSecret, eidOf, extBody, extNotPersonalised } from './ext-identity.js'

/**
 * `POST /api/auth/ext/mac {epk}` (ext-auth contract §1.3): proves the device to the broker, HMAC(S_db, nonce) of a
 * fresh timed nonce. The device keeps nothing: the broker refuses a nonce seen or out of time.
 */
export function extMac(actor: AuthContext, req: CommandRequest): CommandReply {
  if (actor.fresh) return extNotPersonalised()
  const broker = brokerSecret(actor, extBody(req.body).epk)
  if ('status' in broker) return broker
  const nonce = timedNonce(actor.now(), (n) => actor.hal.entropy.read(n))
  return {
    status: 200,
    body: { nonce: toBase64(nonce), mac: toBase64(hmacSha256(broker.sDb, nonce)), eid: eidOf(actor) },
  }
}
