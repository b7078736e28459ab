import {
  AUTHREQ_KEY_USE_LIFETIME,
  AUTHREQ_LIFETIME,
  type CommandReply,
  type CommandRequest,
  EXT_PAIRINGS_OP,
  type ExtPairingsAnswer,
  fail,
  fromBase64,
  keyHintScope,
  normaliseKid,
  toBase64,
} from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { type AuthreqRecipient, authreqJwt } from './ext-authreq.js'
import { clientSource } from './client-source.js'
import { brokerSecret, eidOf, extBody, extNotPersonalised, identitySecret } from './ext-identity.js'

const KEY_USE = 'keymgmt:use:'
const utf8 = new TextEncoder()

interface Asked {
  scope: string
  exp?: number
  ctx?: string
  note?: string
}

/** The body's optional fields within their bounds (ext-auth contract §1.4); a message when one is not. */
function askedOf(body: Record<string, unknown>): Asked | string {
  const { scope, exp, ctx, note } = body
  if (typeof scope !== 'string') return '`scope` must be a string'
  const bytes = utf8.encode(scope).length
  if (bytes < 1 || bytes > 1023) return '`scope` must be 1 to 1023 bytes'
  if (exp !== undefined && (typeof exp !== 'number' || !Number.isFinite(exp))) return '`exp` must be a number'
  if (ctx !== undefined && (typeof ctx !== 'string' || ctx.length < 1 || ctx.length > 64))
    return '`ctx` must be 1 to 64 characters'
  if (note !== undefined && (typeof note !== 'string' || note.length < 1 || note.length > 128))
    return '`note` must be 1 to 128 characters'
  return {
    scope,
    ...(exp !== undefined ? { exp } : {}),
    ...(ctx !== undefined ? { ctx } : {}),
    ...(note !== undefined ? { note } : {}),
  }
}

/** The KID a scope asks to use, when it is exactly `keymgmt:use:<kid>`: the app is told that key's type and label. */
function usedKid(scope: string): string | undefined {
  return scope.startsWith(KEY_USE) ? normaliseKid(scope.slice(KEY_USE.length)) : undefined
}

/**
 * `POST /api/auth/ext/request {epk, scope, exp?, ctx?, note?}` (ext-auth contract §1.4), no token: an `authreq`
 * sealing the scope for every paired authenticator, and an approval challenge in the book. Nothing is journaled:
 * a stranger's flood costs no journal write, and only recycles its own challenges.
 */
export async function extRequest(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  if (actor.fresh) return extNotPersonalised()
  const body = extBody(req.body)
  const broker = brokerSecret(actor, body.epk)
  if ('status' in broker) return broker
  const asked = askedOf(body)
  if (typeof asked === 'string') return fail(400, 'bad_request', asked)
  const kid = usedKid(asked.scope)
  const known = await actor.keystore(EXT_PAIRINGS_OP, { rid: req.rid, tls: req.tls, body: kid ? { kid } : {} })
  if (known.status !== 200) return known
  const { pairings, key } = known.body as ExtPairingsAnswer
  const now = actor.now()
  const expires = now + (asked.scope.startsWith(KEY_USE) ? AUTHREQ_KEY_USE_LIFETIME : AUTHREQ_LIFETIME)
  const bound = asked.exp !== undefined && asked.exp > now ? { bound: Math.floor(asked.exp) } : {}
  const { jti } = actor.extApprovals.issue(now, clientSource(req.source), { scope: asked.scope, expires, ...bound })
  const recipients = pairings.flatMap(({ pid, aid }): AuthreqRecipient[] => {
    const sPair = identitySecret(actor, fromBase64(aid))
    return sPair ? [{ pid, sPair }] : []
  })
  const text = key ? keyHintScope(asked.scope, key.word, key.label) : asked.scope
  const fields = {
    iss: eidOf(actor),
    aud: toBase64(broker.epk),
    iat: now,
    exp: expires,
    jti,
    ...(asked.ctx !== undefined ? { ctx: asked.ctx } : {}),
    ...(asked.note !== undefined ? { note: asked.note } : {}),
  }
  return { status: 200, body: { authreq: authreqJwt(fields, text, recipients, broker.sDb), epk: body.epk } }
}
