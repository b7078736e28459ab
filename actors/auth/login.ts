import { type CommandReply, type CommandRequest, encodeBase64, fail, LogResult, LogType } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { EjwtError, parseEjwt, validateLoginClaims } from './ejwt.js'

/** `GET /api/auth/token`: a single-use challenge for this boot's session key. */
export function loginChallenge(actor: AuthContext): CommandReply {
  if (actor.fresh) return fail(409, 'not_personalised', 'The device has no owner yet: personalise it first')
  const { jti, exp } = actor.challenges.issue(actor.now())
  return {
    status: 200,
    body: {
      exp,
      spk: actor.session.spk,
      jti,
      lbl: actor.config.user,
      eid: encodeBase64(actor.hal.enclave.identityPublicKey),
    },
  }
}

/** `POST /api/auth/token {auth}`: the eJWT of the user or master key → a bearer token. */
export function login(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  return actor.braked(async () => {
    if (actor.fresh) return fail(409, 'not_personalised', 'The device has no owner yet: personalise it first')
    try {
      const parsed = parseEjwt(authOf(req.body))
      const claims = validateLoginClaims(parsed.payload, { spk: actor.session.spk, now: actor.now() })
      actor.session.verify(parsed, claims.iss)
      const role = actor.roleOf(claims.iss)
      if (!role) throw new EjwtError('unknown_key', 'the key is not one of this device')
      if (!actor.challenges.consume(claims.jti, actor.now()))
        throw new EjwtError('unknown_jti', 'the challenge is unknown, used or expired')
      const token = actor.tokens.mint({ scope: claims.scope, sub: role, exp: claims.exp }, actor.now())
      await actor.journal([
        {
          type: LogType.AUTH_SUCCESS_INTERNAL,
          result: LogResult.OK,
          subject: role,
          data: { source: 200, scope: claims.scope, rid: req.rid },
        },
      ])
      return { status: 200, body: { token } }
    } catch (err) {
      if (err instanceof EjwtError) {
        return fail(
          err.status,
          err.status === 400 ? 'bad_request' : 'unauthorized',
          err.status === 400 ? err.message : 'Authentication failed',
        )
      }
      throw err
    }
  })
}

/** The `auth` field of the body as the client sent it (the gateway leaves this body to us, see routes). */
function authOf(body: unknown): unknown {
  const raw = (body as { raw?: unknown } | undefined)?.raw
  let json: unknown
  try {
    json = typeof raw === 'string' ? JSON.parse(raw) : undefined
  } catch {
    throw new EjwtError('malformed', 'the body is not JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new EjwtError('malformed', 'the body must be a JSON object {"auth": eJWT}')
  return (json as { auth?: unknown }).auth
}
