import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { decodeBase64, signCheckinReply } from '../protocol/index.js'
import { DEVID, type DeviceRecord, type DeviceRegistry } from './device-registry.js'
import { objectBody, refuse } from './reply-helpers.js'
import type { CloudReply, CloudRequest, CloudRoute } from './types.js'

/** The device's statement in `check`, as far as the cloud reads it. */
interface Statement {
  devid: string
  /** Present together on a device that states them (ext-auth contract §3.2): b64(32) each. */
  eid?: string
  eidSign?: Uint8Array
}

const PART = /^[A-Za-z0-9_-]+$/
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex')

/**
 * `POST /checkin` (ext-auth contract §3.1): the device's `{check}` in, the backend-signed `{checked}` out, with the
 * operator's order for that device. A statement for a devid whose log key is pinned must be signed by it (401, and
 * the registry is left as it was); a first statement with `eid_sign` pins that key, once its own signature verifies.
 */
export function checkinRoute(registry: DeviceRegistry, backendKey: KeyObject): CloudRoute {
  return { method: 'POST', pattern: '/checkin', handler: (req) => checkin(req, registry, backendKey) }
}

async function checkin(req: CloudRequest, registry: DeviceRegistry, backendKey: KeyObject): Promise<CloudReply> {
  const check = objectBody(req.body)?.check
  const parts = typeof check === 'string' ? check.split('.') : []
  const statement = parts.length === 2 && parts.every((part) => PART.test(part)) ? readStatement(parts[0]!) : undefined
  if (!statement) {
    return refuse(400, 'bad_request', '`check` must be a device statement {devid, nonce} "." its signature')
  }
  const [signed, signature] = parts as [string, string]
  const signedBy = (key: Uint8Array) => verifies(signed, signature, key)
  let unverified = false
  const record = await registry.update(statement.devid, (current) => {
    const pinned = current?.eid_sign === undefined ? undefined : decodeBase64(current.eid_sign)
    const key = pinned ?? statement.eidSign
    // Nothing to pin and nothing pinned: an older device still gets its reply, the registry learns nothing.
    if (!key) return undefined
    unverified = !signedBy(key)
    if (unverified) return undefined
    return registered(current, statement, req.now)
  })
  if (unverified) return refuse(401, 'unverified', 'The statement is not signed by the log key this device pinned')
  const action = record?.policy
  return { status: 200, body: { checked: signCheckinReply(check as string, backendKey, { iat: req.now, action }) } }
}

function registered(current: DeviceRecord | undefined, statement: Statement, now: number): DeviceRecord {
  const eidSign = current?.eid_sign ?? (statement.eidSign && Buffer.from(statement.eidSign).toString('base64'))
  return {
    ...current,
    ...(eidSign ? { eid_sign: eidSign } : {}),
    ...(statement.eid ? { eid: statement.eid } : {}),
    last_checkin: now,
  }
}

function readStatement(part: string): Statement | undefined {
  let claims: Record<string, unknown> | undefined
  try {
    claims = objectBody(JSON.parse(Buffer.from(part, 'base64url').toString('utf8')))
  } catch {
    return undefined
  }
  if (!claims || typeof claims.devid !== 'string' || !DEVID.test(claims.devid) || typeof claims.nonce !== 'string')
    return undefined
  const eid = typeof claims.eid === 'string' ? decodeBase64(claims.eid) : undefined
  const eidSign = typeof claims.eid_sign === 'string' ? decodeBase64(claims.eid_sign) : undefined
  if (eid?.length !== 32 || eidSign?.length !== 32) return { devid: claims.devid }
  return { devid: claims.devid, eid: Buffer.from(eid).toString('base64'), eidSign }
}

function verifies(signed: string, signature: string, publicKey: Uint8Array): boolean {
  const bytes = Buffer.from(signature, 'base64url')
  if (bytes.length !== 64) return false
  try {
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI, publicKey]), format: 'der', type: 'spki' })
    return verify(null, Buffer.from(signed), key, bytes)
  } catch {
    return false
  }
}
