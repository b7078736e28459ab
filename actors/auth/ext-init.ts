import { type CommandReply, type CommandRequest, signExtJwt, toBase64 } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { clientSource } from './client-source.js'
import { brokerSecret, eidOf, extBody, extNotPersonalised } from './ext-identity.js'

/**
 * `POST /api/auth/ext/init {epk}` (ext-auth contract §1.1): a pairing `request` signed with S_db, for the phone to
 * answer through the broker. Its one effect is a pairing challenge in the book (24 h); nothing is journaled.
 */
export function extInit(actor: AuthContext, req: CommandRequest): CommandReply {
  if (actor.fresh) return extNotPersonalised()
  const broker = brokerSecret(actor, extBody(req.body).epk)
  if ('status' in broker) return broker
  const { jti, exp } = actor.extPairings.issue(actor.now(), clientSource(req.source), { epk: broker.epk })
  const eid = eidOf(actor)
  const request = signExtJwt({ jti, exp, aud: toBase64(broker.epk), iss: eid }, broker.sDb)
  return { status: 200, body: { request, eid } }
}
