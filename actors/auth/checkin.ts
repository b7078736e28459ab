import type { CommandReply, CommandRequest } from '../bus/types.js'
import { fail, type AuthActor } from './auth-actor.js'

/**
 * `GET /api/system/checkin`: a device-signed challenge for a trusted backend:
 * base64url(JSON {devid, nonce, iat}) "." base64url(Ed25519 signature by the log key).
 */
export function checkinChallenge(actor: AuthActor): CommandReply {
  const statement = Buffer.from(
    JSON.stringify({ devid: actor.hal.devid, nonce: actor.nonces.issue(actor.now()).jti, iat: actor.now() }),
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
