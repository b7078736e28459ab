import { HalError } from '../../hal/index.js'
import { type CommandReply, fail, fixedBase64, toBase64 } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'

/**
 * X25519(eid_prv, peer), computed in the enclave (the private half never leaves it): S_pair with an `aid`, S_db with
 * an `epk` (ext-auth contract §2.2). Undefined for a peer key with no usable secret: an all-zero one is refused.
 */
export function identitySecret(actor: Pick<AuthContext, 'hal'>, peer: Uint8Array): Uint8Array | undefined {
  let secret: Uint8Array
  try {
    secret = actor.hal.enclave.identityAgree(peer)
  } catch (err) {
    if (err instanceof HalError) return undefined
    throw err
  }
  return secret.some((byte) => byte !== 0) ? secret : undefined
}

/** The device's `eid` as the ext routes write it: standard base64 with padding. */
export function eidOf(actor: Pick<AuthContext, 'hal'>): string {
  return toBase64(actor.hal.enclave.identityPublicKey)
}

/** A body field that must be a broker key: 32 bytes of base64 (either alphabet) giving a usable S_db. */
export function brokerSecret(
  actor: Pick<AuthContext, 'hal'>,
  value: unknown,
): { epk: Uint8Array; sDb: Uint8Array } | CommandReply {
  const epk = fixedBase64(value, 32)
  if (!epk) return fail(400, 'bad_request', '`epk` must be base64 of 32 bytes')
  const sDb = identitySecret(actor, epk)
  if (!sDb) return fail(400, 'bad_request', '`epk` gives no shared secret with the device identity')
  return { epk, sDb }
}

/** The 409 of every ext route while the device has no owner (ext-auth contract §1.0, step 3). */
export function extNotPersonalised(): CommandReply {
  return fail(409, 'not_personalised', 'The device has no owner yet: personalise it first')
}

/** The JSON body the gateway checked the types of (an empty object when none came). */
export function extBody(body: unknown): Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
}
