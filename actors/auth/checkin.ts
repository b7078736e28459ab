import { verify } from 'node:crypto'
import {
  CHECKIN_REPLY_TYPE,
  type CheckinReply,
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
} from '../../protocol/index.js'
import { ed25519PublicKey } from '../../hal/index.js'
import type { AuthContext } from './auth-context.js'
import { ChallengeBook } from './challenges.js'
import { clientSource } from './client-source.js'

/**
 * Check-in nonces, one book per auth incarnation (they die with it, like its tokens). Never the
 * config nonce book: anyone may ask for a check-in, and its nonce must neither pass for a
 * `userkey_nonce` nor push the owner's config nonce out of a shared, bounded book.
 */
const checkinNonces = new WeakMap<AuthContext, ChallengeBook>()

function checkinBook(actor: AuthContext): ChallengeBook {
  let book = checkinNonces.get(actor)
  if (!book) {
    // Bounded per client as the login challenges are, so that strangers cannot flush a backend's nonce.
    book = new ChallengeBook({ random: (n) => actor.hal.entropy.read(n), capacity: 4096, perSource: 64 })
    checkinNonces.set(actor, book)
  }
  return book
}

/**
 * `GET /api/system/checkin`: a device-signed challenge for a trusted backend:
 * base64url(JSON {devid, nonce, iat, eid, eid_sign}) "." base64url(Ed25519 signature by the log key).
 * `eid` and `eid_sign` let the cloud's registry pin the log key and wrap a TLS key for this device.
 */
export function checkinChallenge(actor: AuthContext, req: CommandRequest): CommandReply {
  const nonce = checkinBook(actor).issue(actor.now(), clientSource(req.source)).jti
  const { enclave } = actor.hal
  const claims = {
    devid: actor.hal.devid,
    nonce,
    iat: actor.now(),
    eid: encodeBase64(enclave.identityPublicKey),
    eid_sign: encodeBase64(enclave.logSigner.publicKey),
  }
  const statement = Buffer.from(JSON.stringify(claims)).toString('base64url')
  const signature = Buffer.from(enclave.logSigner.sign(Buffer.from(statement))).toString('base64url')
  return { status: 200, body: { check: `${statement}.${signature}` } }
}

/**
 * `POST /api/system/checkin {checked}`: with no trusted backend configured the reply is only
 * acknowledged; nothing changes. With one, the reply must carry the backend's Ed25519 signature
 * over a statement that names this device and a live check-in nonce of its own (good once); its
 * `action` then locks the device (fls 0x40) or shuts it down (0x80) until the next boot.
 */
export async function checkinReply(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  const checked = (req.body as { checked?: unknown } | undefined)?.checked
  if (typeof checked !== 'string' || checked === '')
    return fail(400, 'bad_request', '`checked` must be a non-empty string')
  if (!actor.config.trusted_backend) return { status: 200, body: { status: 'OK' } }
  const reply = verifiedReply(actor, checked)
  if (typeof reply === 'string') return fail(406, 'backend_unverified', reply)
  if (!checkinBook(actor).consume(reply.nonce, actor.now()))
    return fail(406, 'backend_unverified', 'The reply answers no live check-in of this device')
  if (!reply.action) return { status: 200, body: { status: 'OK' } }
  await actor.checkinOrder(reply.action, req.rid)
  return { status: 200, body: { status: reply.action === 'lock' ? 'LOCKED' : 'SHUTDOWN' } }
}

const PART = /^[A-Za-z0-9_-]+$/

/** The statement, once its signature, shape and device check out; otherwise why not (never echoing it). */
function verifiedReply(actor: AuthContext, checked: string): CheckinReply | string {
  const [statement, signature, extra] = checked.split('.')
  if (extra !== undefined || !statement || !signature || !PART.test(statement) || !PART.test(signature)) {
    return '`checked` must be base64url(statement) "." base64url(signature)'
  }
  const signatureBytes = Buffer.from(signature, 'base64url')
  if (
    signatureBytes.length !== 64 ||
    !verify(null, Buffer.from(statement), ed25519PublicKey(actor.hal.backendKey), signatureBytes)
  ) {
    return 'The reply is not signed by the trusted backend'
  }
  let reply: Partial<CheckinReply>
  try {
    reply = JSON.parse(Buffer.from(statement, 'base64url').toString('utf8')) as Partial<CheckinReply>
  } catch {
    return 'The signed statement is not JSON'
  }
  if (reply?.typ !== CHECKIN_REPLY_TYPE || typeof reply.nonce !== 'string' || typeof reply.iat !== 'number')
    return 'The signed statement is not a check-in reply'
  if (reply.devid !== actor.hal.devid) return 'The reply is for another device'
  if (reply.action !== undefined && reply.action !== 'lock' && reply.action !== 'shutdown')
    return 'The reply orders an unknown action'
  return reply as CheckinReply
}
