import type { CommandReply, CommandRequest } from '../bus/types.js'
import { fail } from '../bus/fail.js'
import type { AuthActor } from './auth-actor.js'
import { ChallengeBook } from './challenges.js'

/**
 * Check-in nonces, one book per auth incarnation (they die with it, like its tokens). Never the
 * config nonce book: anyone may ask for a check-in, and its nonce must neither pass for a
 * `userkey_nonce` nor push the owner's config nonce out of a shared, bounded book.
 */
const checkinNonces = new WeakMap<AuthActor, ChallengeBook>()

function checkinBook(actor: AuthActor): ChallengeBook {
  let book = checkinNonces.get(actor)
  if (!book) checkinNonces.set(actor, (book = new ChallengeBook({ random: (n) => actor.hal.entropy.read(n) })))
  return book
}

/**
 * `GET /api/system/checkin`: a device-signed challenge for a trusted backend:
 * base64url(JSON {devid, nonce, iat}) "." base64url(Ed25519 signature by the log key).
 */
export function checkinChallenge(actor: AuthActor): CommandReply {
  const statement = Buffer.from(
    JSON.stringify({ devid: actor.hal.devid, nonce: checkinBook(actor).issue(actor.now()).jti, iat: actor.now() }),
  ).toString('base64url')
  const signature = Buffer.from(actor.hal.enclave.logSigner.sign(Buffer.from(statement))).toString('base64url')
  return { status: 200, body: { check: `${statement}.${signature}` } }
}

/**
 * `POST /api/system/checkin {checked}`: with no trusted backend configured the reply is only
 * acknowledged; nothing changes. A trusted backend's signed orders come with the backend issue.
 */
export function checkinReply(actor: AuthActor, req: CommandRequest): CommandReply {
  const checked = (req.body as { checked?: unknown } | undefined)?.checked
  if (typeof checked !== 'string' || checked === '') return fail(400, 'bad_request', '`checked` must be a non-empty string')
  if (actor.config.trusted_backend) return fail(406, 'backend_unverifiable', 'This device cannot verify a trusted backend yet')
  return { status: 200, body: { status: 'OK' } }
}
