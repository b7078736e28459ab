import { type CommandReply, type CommandRequest, encodeBase64, fail, LogResult, LogType } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { clientSource } from './client-source.js'
import { EjwtError, type LoginClaims, type ParsedEjwt, parseEjwt, validateLoginClaims } from './ejwt.js'
import { QUEUE_FULL } from './login-queue.js'

/** `GET /api/auth/token`: a single-use challenge for this boot's session key. */
export function loginChallenge(actor: AuthContext, req: Pick<CommandRequest, 'source'> = {}): CommandReply {
  if (actor.fresh) return fail(409, 'not_personalised', 'The device has no owner yet: personalise it first')
  const { jti, exp } = actor.challenges.issue(actor.now(), clientSource(req.source))
  return {
    status: 200,
    body: {
      exp,
      spk: actor.session.spk,
      jti,
      lbl: actor.config.user,
      // What the passphrases' keys are derived with: this device's eid, or a restored device's source's.
      eid: loginSalt(actor),
    },
  }
}

/** The eid the owner's passphrase keys were derived under (docs/backup.md): the device's own unless restored. */
export function loginSalt(actor: Pick<AuthContext, 'hal'>): string {
  const { enclave } = actor.hal
  return enclave.credentials()?.salt ?? encodeBase64(enclave.identityPublicKey)
}

/**
 * `POST /api/auth/token {auth}`: the eJWT of the user or master key → a bearer token. Screened
 * at once, then checked in the client's place of the login queue; every refusal journaled
 * (FailedLoginAudit).
 */
export async function login(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const reply = await actor.logins.run(
    clientSource(req.source),
    req.deadline,
    () => check(actor, req),
    () => screen(actor, req),
  )
  // Refused by the queue, unread: not awaited, so that a flood costs no write per attempt.
  if (reply.status === QUEUE_FULL || reply.status === 504)
    void actor.failedLogins.refused({ status: reply.status, rid: req.rid })
  return reply
}

/**
 * Refuses what is refused whatever the passphrase: no owner, a malformed eJWT, claims that do
 * not hold, a challenge that is not live. It reads only what the client built itself, so it
 * tests no guess, and what it refuses takes no place in the pace of checks. Undefined: check it.
 */
async function screen(actor: AuthContext, req: CommandRequest): Promise<CommandReply | undefined> {
  return examine(actor, req, async (_parsed, claims) => {
    // Not used up: only a check may consume it.
    if (!actor.challenges.live(claims.jti, actor.now()))
      throw new EjwtError('unknown_jti', 'the challenge is unknown, used or expired')
    return undefined
  })
}

/** The check of the guess: the MAC with the claimed key, that key one of the owner's, then the challenge used up. */
async function check(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  return examine(actor, req, async (parsed, claims) => {
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
  })
}

/**
 * Reads the eJWT and its claims (again at the check: its claims' times and its challenge may
 * have run out while it waited), then `step`; a refusal of either is journaled and answered.
 */
async function examine<T extends CommandReply | undefined>(
  actor: AuthContext,
  req: CommandRequest,
  step: (parsed: ParsedEjwt, claims: LoginClaims) => Promise<T>,
): Promise<T | CommandReply> {
  if (actor.fresh) {
    await actor.failedLogins.refused({ status: 409, rid: req.rid })
    return fail(409, 'not_personalised', 'The device has no owner yet: personalise it first')
  }
  let parsed: ParsedEjwt | undefined
  try {
    parsed = parseEjwt(authOf(req.body))
    return await step(parsed, validateLoginClaims(parsed.payload, { spk: actor.session.spk, now: actor.now() }))
  } catch (err) {
    if (!(err instanceof EjwtError)) throw err
    const scope = parsed?.payload.scope
    // Within the answer's held time: the record costs the owner nothing, and a flood is counted, not written.
    await actor.failedLogins.refused({
      status: err.status,
      rid: req.rid,
      ...(typeof scope === 'string' ? { scope } : {}),
    })
    return fail(
      err.status,
      err.status === 400 ? 'bad_request' : 'unauthorized',
      err.status === 400 ? err.message : 'Authentication failed',
    )
  }
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
