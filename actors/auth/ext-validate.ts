import {
  type CommandReply,
  type CommandRequest,
  EXT_PAIR_OP,
  type ExtPairBody,
  extJwtSigned,
  ExtJwtError,
  fail,
  fixedBase64,
  hmacSha256,
  LogResult,
  LogType,
  parseExtJwt,
  type ParsedExtJwt,
  sameBytes,
  toBase64,
} from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { extBody, extNotPersonalised, identitySecret } from './ext-identity.js'

/** A paired key's label when the phone names itself with nothing printable (ext-auth contract §1.2). */
export const DEFAULT_PAIRING_LABEL = 'ExtAuth'

/** The phone's `label` as a key label: its printable ASCII, cut to 32 characters; `ExtAuth` when none is left. */
export function pairingLabel(label: unknown): string {
  const printable = typeof label === 'string' ? label.replace(/[^\x20-\x7e]/g, '').slice(0, 32) : ''
  return printable === '' ? DEFAULT_PAIRING_LABEL : printable
}

interface Reply {
  parsed: ParsedExtJwt
  aid: Uint8Array
  jti: string
  aud: string
  epk: string
}

/** The reply's shape (contract §1.2 checks 1 and 2): a 400 when it is not one. */
function replyOf(text: string): Reply | CommandReply {
  let parsed: ParsedExtJwt
  try {
    parsed = parseExtJwt(text)
  } catch (err) {
    if (err instanceof ExtJwtError) return fail(400, 'bad_request', '`reply` is not an HS256 eJWT')
    throw err
  }
  const { iss, jti, aud, epk } = parsed.payload
  const aid = fixedBase64(iss, 32)
  if (!aid || typeof jti !== 'string' || typeof aud !== 'string' || typeof epk !== 'string')
    return fail(400, 'bad_request', 'the reply must carry `iss` (32 bytes of base64), `jti`, `aud` and `epk`')
  return { parsed, aid, jti, aud, epk }
}

/**
 * `POST /api/auth/ext/validate {pid, reply}` (ext-auth contract §1.2): checks the phone's reply to a pairing
 * challenge, then asks the key store to keep its `aid` as a pairing (which checks the user's token itself, and
 * refuses a key stored already or a ninth pairing). Answers `{kid, code}` for the broker's finalise.
 * `bearer` is the user's token as it came: the key store takes no word of ours for who asks.
 */
export async function extValidate(actor: AuthContext, req: CommandRequest, bearer: string): Promise<CommandReply> {
  if (actor.fresh) return extNotPersonalised()
  const body = extBody(req.body)
  const pid = fixedBase64(body.pid, 32)
  if (!pid) return fail(400, 'bad_request', '`pid` must be base64 of 32 bytes')
  if (typeof body.reply !== 'string') return fail(400, 'bad_request', '`reply` must be a string')
  const reply = replyOf(body.reply)
  if ('status' in reply) return reply
  const now = actor.now()
  const challenge = actor.extPairings.facts(reply.jti, now)
  if (!challenge) return refused(actor, req, 'the pairing challenge is unknown, used or expired')
  const aud = fixedBase64(reply.aud, 32)
  const epk = fixedBase64(reply.epk, 32)
  if (!aud || !sameBytes(aud, actor.hal.enclave.identityPublicKey) || !epk || !sameBytes(epk, challenge.epk))
    return refused(actor, req, 'the reply is not for this device and challenge')
  const sPair = identitySecret(actor, reply.aid)
  if (!sPair || !extJwtSigned(reply.parsed, sPair)) return refused(actor, req, 'the reply is not signed by its `iss`')
  const pairing: ExtPairBody = {
    aid: toBase64(reply.aid),
    pid: toBase64(pid),
    label: pairingLabel(reply.parsed.payload.label),
  }
  const stored = await actor.keystore(EXT_PAIR_OP, { rid: req.rid, tls: req.tls, bearer, body: pairing })
  if (stored.status === 406) {
    actor.extPairings.end(reply.jti, now, { type: 'REFUSED' })
    return refused(actor, req, 'the key store refused the pairing', stored)
  }
  if (stored.status !== 200) return stored
  const kid = (stored.body as { kid: string }).kid
  actor.extPairings.end(reply.jti, now, { type: 'PAIRED' })
  await actor.journal([
    {
      type: LogType.AUTH_PAIRED_EXTERNAL,
      result: LogResult.OK,
      subject: 'U',
      data: { source: 200, rid: req.rid, kid },
    },
  ])
  // S_db of the challenge's broker key: the broker checks with it that this device took this reply.
  const sDb = identitySecret(actor, challenge.epk)!
  return { status: 200, body: { kid, code: toBase64(hmacSha256(sDb, body.reply)) } }
}

/** 406 and AUTH_PAIRED_EXTERNAL FAILED (our addition, contract §6.14): a refused reply is on record. */
async function refused(
  actor: AuthContext,
  req: CommandRequest,
  message: string,
  answer: CommandReply = fail(406, 'pairing_refused', message),
): Promise<CommandReply> {
  await actor.journal([
    {
      type: LogType.AUTH_PAIRED_EXTERNAL,
      result: LogResult.FAILED,
      subject: 'U',
      data: { source: 406, rid: req.rid, reason: message },
    },
  ])
  return answer
}
