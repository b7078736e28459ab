import { sign, type KeyObject } from 'node:crypto'

/** What a trusted backend may order a device in its check-in reply. */
export type CheckinAction = 'lock' | 'shutdown'

/** The signed statement of a check-in reply: the device's own nonce back, so that a reply is good once. */
export interface CheckinReply {
  typ: typeof CHECKIN_REPLY_TYPE
  devid: string
  nonce: string
  /** The backend's time, Unix seconds. */
  iat: number
  action?: CheckinAction
}

/** Names the statement, so that no other Ed25519 signature of the backend's can pass for one. */
export const CHECKIN_REPLY_TYPE = 'hem-checkin-reply'

/**
 * The backend's side of a check-in: reads the device's `check` (GET /api/system/checkin) and
 * signs the `checked` to POST back: base64url(JSON statement) "." base64url(Ed25519 signature of
 * the first part's ASCII), the shape of the device's own `check`.
 */
export function signCheckinReply(
  check: string,
  backendKey: KeyObject,
  reply: { action?: CheckinAction; iat?: number } = {},
): string {
  const [statement] = check.split('.')
  const asked = JSON.parse(Buffer.from(statement ?? '', 'base64url').toString('utf8')) as {
    devid?: unknown
    nonce?: unknown
  }
  if (typeof asked.devid !== 'string' || typeof asked.nonce !== 'string')
    throw new TypeError('not a device check-in challenge')
  const body: CheckinReply = {
    typ: CHECKIN_REPLY_TYPE,
    devid: asked.devid,
    nonce: asked.nonce,
    iat: reply.iat ?? Math.floor(Date.now() / 1000),
    ...(reply.action ? { action: reply.action } : {}),
  }
  const encoded = Buffer.from(JSON.stringify(body)).toString('base64url')
  return `${encoded}.${sign(null, Buffer.from(encoded), backendKey).toString('base64url')}`
}
