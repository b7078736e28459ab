import {
  type CommandReply,
  type CommandRequest,
  EXT_PAIRINGS_OP,
  extAuthSub,
  extJwtSigned,
  ExtJwtError,
  type ExtPairing,
  type ExtPairingsAnswer,
  fail,
  fixedBase64,
  LogResult,
  LogType,
  openScope,
  parseExtJwt,
  type ParsedExtJwt,
  sameBytes,
  toBase64,
} from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { LOGIN_MAX_LIFETIME } from './bearer.js'
import { clientSource } from './client-source.js'
import type { ApprovalFacts } from './ext-auth-book.js'
import { extNotPersonalised, identitySecret } from './ext-identity.js'
import { QUEUE_FULL } from './login-queue.js'

/** A bearer's lifetime when the authreply names none (`exp` 0 or absent, ext-auth contract §1.5). */
export const EXT_TOKEN_DEFAULT_LIFETIME = 8 * 3600
const AUTHREPLY_MAX_LENGTH = 4096

/** A refusal of the exchange: its status (400, 401 or 406, contract §1.5) and what the journal says of it. */
class ExtTokenRefusal extends Error {
  override readonly name = 'ExtTokenRefusal'
  constructor(
    readonly status: 400 | 401 | 406,
    message: string,
  ) {
    super(message)
  }
}

/** An approval checked up to its challenge's outcome: what the bearer is minted from. */
interface Approved {
  pairing: ExtPairing
  /** The scope the bearer gets: the opened scope cut at its first `#` (the key hint). */
  scope: string
  exp: number
  /** The authreply's `ctx`, copied into the bearer. */
  ctx?: string
}

/**
 * The scope granted is the one asked, or differs only by a trailing `:rw` added or removed on a `storage:` scope
 * (the app's write switch, contract §6.4): the firmware trusts any scope the phone sealed, we do not.
 */
export function grantable(asked: string, granted: string): boolean {
  if (granted === asked) return true
  if (!asked.startsWith('storage:')) return false
  return granted === `${asked}:rw` || asked === `${granted}:rw`
}

/**
 * The bearer's `exp`: the authreply's (0 or absent: now + 8 h), at most 24 h from now and at most the cap the
 * ext/request body set (contract §1.5); a time not after now is no token.
 */
export function extTokenExp(claimed: unknown, now: number, challenge: Pick<ApprovalFacts, 'bound'>): number {
  const asked =
    typeof claimed === 'number' && Number.isFinite(claimed) && claimed !== 0 ? Math.floor(claimed) : undefined
  return Math.min(asked ?? now + EXT_TOKEN_DEFAULT_LIFETIME, now + LOGIN_MAX_LIFETIME, challenge.bound ?? Infinity)
}

/**
 * `POST /api/auth/ext/token {authreply}` (ext-auth contract §1.5), no token: an approval exchanged for an ExtAuth
 * bearer. Paced as the passphrase logins are and in the same queue (the same answer floor, and its refusals count
 * with theirs): refusals are screened at once, the exchange itself runs in its turn and checks everything again.
 */
export async function extToken(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const reply = await actor.logins.run(
    clientSource(req.source),
    req.deadline,
    () => examine(actor, req, true),
    () => examine(actor, req, false),
  )
  if (reply.status === QUEUE_FULL || reply.status === 504)
    void actor.failedExtLogins.refused({ status: reply.status, rid: req.rid })
  return reply
}

/**
 * Every check of contract §1.5 in its order; with `exchange`, the challenge is then ended as its machine says and
 * the bearer minted. Without, a refusal is answered and an exchange that would pass is left to its turn (undefined).
 */
async function examine(actor: AuthContext, req: CommandRequest, exchange: true): Promise<CommandReply>
async function examine(actor: AuthContext, req: CommandRequest, exchange: false): Promise<CommandReply | undefined>
async function examine(actor: AuthContext, req: CommandRequest, exchange: boolean): Promise<CommandReply | undefined> {
  if (actor.fresh) return extNotPersonalised()
  try {
    const approved = await approval(actor, req, exchange)
    if (!exchange) return undefined
    const sub = extAuthSub(approved.pairing.kid)
    const { scope, exp, ctx } = approved
    const token = actor.tokens.mint({ scope, sub, exp, ...(ctx !== undefined ? { ctx } : {}) }, actor.now())
    await actor.journal([
      {
        type: LogType.AUTH_SUCCESS_EXTERNAL,
        result: LogResult.OK,
        subject: sub,
        data: { source: 200, rid: req.rid, kid: approved.pairing.kid, scope: approved.scope },
      },
    ])
    return { status: 200, body: { token } }
  } catch (err) {
    if (!(err instanceof ExtTokenRefusal)) throw err
    // Within the answer's held time: counted in windows, so a stranger's flood is not a write per attempt.
    if (err.status !== 400) await actor.failedExtLogins.refused({ status: err.status, rid: req.rid })
    return fail(err.status, ERRORS[err.status], err.message)
  }
}

const ERRORS = { 400: 'bad_request', 401: 'unauthorized', 406: 'approval_refused' } as const

/** The authreply of the body, parsed: a 400 for a body without one, a 401 for one that is no HS256 eJWT. */
function authreplyOf(req: CommandRequest): ParsedExtJwt {
  const raw = (req.body as { raw?: unknown } | undefined)?.raw
  let json: unknown
  try {
    json = typeof raw === 'string' ? JSON.parse(raw) : undefined
  } catch {
    throw new ExtTokenRefusal(400, 'the body is not JSON')
  }
  const text = (json as { authreply?: unknown } | null | undefined)?.authreply
  if (typeof text !== 'string' || text.length > AUTHREPLY_MAX_LENGTH)
    throw new ExtTokenRefusal(400, `the body must be {"authreply": eJWT of at most ${AUTHREPLY_MAX_LENGTH} characters}`)
  try {
    return parseExtJwt(text)
  } catch (err) {
    if (err instanceof ExtJwtError) throw new ExtTokenRefusal(401, 'Authentication failed')
    throw err
  }
}

async function approval(actor: AuthContext, req: CommandRequest, exchange: boolean): Promise<Approved> {
  const parsed = authreplyOf(req)
  const { payload } = parsed
  const pid = fixedBase64(payload.pid, 32)
  const pairings = pid ? await pairingsOf(actor, req) : []
  const pairing = pid && pairings.find((p) => p.pid === toBase64(pid))
  if (!pairing) throw new ExtTokenRefusal(406, 'The issuer is not paired with this device')
  const aid = fixedBase64(payload.iss, 32)
  if (!aid || toBase64(aid) !== pairing.aid) throw new ExtTokenRefusal(406, 'The issuer is not paired with this device')
  const sPair = identitySecret(actor, aid)
  if (!sPair || !extJwtSigned(parsed, sPair)) throw new ExtTokenRefusal(401, 'Authentication failed')
  const now = actor.now()
  const aud = fixedBase64(payload.aud, 32)
  const jti = fixedBase64(payload.jti, 32)
  const challenge = jti && actor.extApprovals.facts(payload.jti, now)
  if (!aud || !sameBytes(aud, actor.hal.enclave.identityPublicKey) || !jti || !challenge)
    throw new ExtTokenRefusal(401, 'Authentication failed')
  // The authenticator answered (its signature holds): a refusal spends the challenge at once, screened or not.
  const end = (type: 'GRANTED' | 'REFUSED' | 'EXPIRED') => actor.extApprovals.end(payload.jti, now, { type })
  if (now > challenge.expires) {
    end('EXPIRED')
    throw new ExtTokenRefusal(401, 'Authentication failed')
  }
  const opened = openScope(payload.scope, sPair, jti)
  const scope = opened?.split('#')[0]
  if (scope === undefined || !grantable(challenge.scope, scope)) {
    end('REFUSED')
    throw new ExtTokenRefusal(406, 'The scope approved is not the one asked')
  }
  const exp = extTokenExp(payload.exp, now, challenge)
  if (exp <= now) {
    end('EXPIRED')
    throw new ExtTokenRefusal(401, 'Authentication failed')
  }
  // Only in its turn: the screen leaves an exchange that would pass to the check, which consumes it.
  if (exchange && end('GRANTED') !== 'granted') throw new ExtTokenRefusal(401, 'Authentication failed')
  const ctx = typeof payload.ctx === 'string' && payload.ctx.length <= 64 ? { ctx: payload.ctx } : {}
  return { pairing, scope, exp, ...ctx }
}

async function pairingsOf(actor: AuthContext, req: CommandRequest): Promise<ExtPairing[]> {
  const known = await actor.keystore(EXT_PAIRINGS_OP, { rid: req.rid, tls: req.tls, body: {} })
  if (known.status !== 200) throw new ExtTokenRefusal(406, 'The pairings cannot be read now')
  return (known.body as ExtPairingsAnswer).pairings
}
