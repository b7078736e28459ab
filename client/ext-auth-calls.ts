// The device's external-authenticator calls (ext-auth-contract §1): pairing (`ext/init`, `ext/validate`),
// the device's proof to the broker (`ext/mac`), the approval's challenge and its exchange for a token
// (`ext/request`, `ext/token`), and the pairings as keys (§1.6).
import { EXT_AUTH_MAX_PAIRINGS, pidOfDescr } from '../protocol/browser.js'
import { fromBase64, toBase64 } from './base64.js'
import type { DeviceJson } from './device-json.js'
import { UnexpectedAnswerError } from './errors.js'
import { isExtJwt, isKey32, isObject } from './ext-shapes.js'
import type { KeyEntry, KeyList } from './types.js'

/** The scope of the owner's pairing calls (a U token; `system:config` would do as well, §1.0). */
export const EXT_PAIR_SCOPE = 'auth:ext:pair'

/** What a pairing's QR code shows of the device (and the eid the broker binds its key to). */
export interface PairingIdentity {
  eid: string
  user: string
  email: string
  hostname: string
}

export interface ExtInit {
  /** The pairing request (eJWT §2.4.1) for the broker. */
  request: string
  eid: string
}

export interface ExtValidated {
  kid: string
  code: string
}

export interface ExtMac {
  nonce: string
  mac: string
  eid: string
}

export interface ExtRequestInput {
  /** The broker's anonymous key. */
  epk: string
  scope: string
  /** Unix seconds: the token, when approved, lives no longer. */
  exp?: number
  ctx?: string
  note?: string
}

export interface ExtRequested {
  /** The approval challenge (eJWT §2.4.3) for the broker, scope sealed per authenticator. */
  authreq: string
  epk: string
}

/** A paired authenticator as the device keeps it: a public key with `descr` "EXTAID" ‖ pid. */
export interface Pairing {
  kid: string
  label: string
  /** b64(32), the broker's pairing id. */
  pid: string
  created: number
}

/** An argument the device would refuse as malformed, refused before anything is sent; names the field only. */
export class ExtInputError extends RangeError {
  override name = 'ExtInputError'
}

const KID = /^[0-9a-f]{32}$/
/** `descr` of a pairing key: "EXTAID" in base64 as a prefix (§1.6). */
const PAIRING_SEARCH = '^RVhUQUlE'
/** The most keys a search answers at once. */
const SEARCH_PAGE = 15

export async function pairingIdentity(s: DeviceJson): Promise<PairingIdentity> {
  const config = await s.authorizedJson<unknown>(EXT_PAIR_SCOPE, 'GET', '/api/system/config')
  if (!isObject(config) || !isKey32(config.eid))
    throw new UnexpectedAnswerError("the device's configuration has no eid")
  const text = (field: unknown) => (typeof field === 'string' ? field : '')
  return { eid: config.eid, user: text(config.user), email: text(config.email), hostname: text(config.hostname) }
}

export async function extInit(s: DeviceJson, epk: string): Promise<ExtInit> {
  const body = await s.authorizedJson<unknown>(EXT_PAIR_SCOPE, 'POST', '/api/auth/ext/init', {
    json: { epk: key(epk) },
  })
  if (!isObject(body) || !isExtJwt(body.request) || !isKey32(body.eid))
    throw new UnexpectedAnswerError('the answer to ext/init lacks request or eid, or has them malformed')
  return { request: body.request, eid: body.eid }
}

export async function extValidate(s: DeviceJson, pid: string, reply: string): Promise<ExtValidated> {
  if (!isExtJwt(reply)) throw new ExtInputError('reply is not an eJWT')
  const json = { pid: key(pid, 'pid'), reply }
  const body = await s.authorizedJson<unknown>(EXT_PAIR_SCOPE, 'POST', '/api/auth/ext/validate', { json })
  if (!isObject(body) || typeof body.kid !== 'string' || !KID.test(body.kid) || !isKey32(body.code))
    throw new UnexpectedAnswerError('the answer to ext/validate lacks kid or code, or has them malformed')
  return { kid: body.kid, code: body.code }
}

export async function extMac(s: DeviceJson, epk: string): Promise<ExtMac> {
  const body = await s.authorizedJson<unknown>(EXT_PAIR_SCOPE, 'POST', '/api/auth/ext/mac', { json: { epk: key(epk) } })
  if (!isObject(body) || !isKey32(body.nonce) || !isKey32(body.mac) || !isKey32(body.eid))
    throw new UnexpectedAnswerError('the answer to ext/mac lacks nonce, mac or eid, or has them malformed')
  return { nonce: body.nonce, mac: body.mac, eid: body.eid }
}

/** No token: whoever asks gets a challenge, and only an authenticator's approval makes it a token. */
export async function extRequest(s: Pick<DeviceJson, 'json'>, input: ExtRequestInput): Promise<ExtRequested> {
  const body = await s.json<unknown>('POST', '/api/auth/ext/request', { json: requestBody(input) })
  if (!isObject(body) || !isExtJwt(body.authreq) || body.epk !== input.epk)
    throw new UnexpectedAnswerError('the answer to ext/request lacks authreq or its epk, or has them malformed')
  return { authreq: body.authreq, epk: body.epk }
}

export async function extToken(s: Pick<DeviceJson, 'json'>, authreply: string): Promise<{ token: string }> {
  if (!isExtJwt(authreply)) throw new ExtInputError('authreply is not an eJWT')
  const body = await s.json<unknown>('POST', '/api/auth/ext/token', { json: { authreply } })
  if (!isObject(body) || typeof body.token !== 'string' || body.token.split('.').length !== 3)
    throw new UnexpectedAnswerError('the answer to ext/token has no token')
  return { token: body.token }
}

/** The device's paired authenticators (keymgmt search of their descr, scope `keymgmt:search`). */
export async function pairings(s: DeviceJson): Promise<Pairing[]> {
  const found: Pairing[] = []
  // A device keeps at most 8 pairings, one page: more pages than that would be a device gone wrong.
  for (let page = 0; page <= EXT_AUTH_MAX_PAIRINGS; page++) {
    const json = { descr: PAIRING_SEARCH, offset: found.length, limit: SEARCH_PAGE }
    const { list } = await s.authorizedJson<KeyList>('keymgmt:search', 'POST', '/api/keymgmt/search', { json })
    if (!Array.isArray(list)) throw new UnexpectedAnswerError('the device sent a malformed search answer')
    found.push(...list.map(pairingOf))
    if (list.length < SEARCH_PAGE) break
  }
  return found
}

function pairingOf(entry: KeyEntry): Pairing {
  const descr = typeof entry.descr === 'string' ? safeBase64(entry.descr) : undefined
  const pid = descr && pidOfDescr(descr)
  if (!pid || typeof entry.kid !== 'string' || !KID.test(entry.kid))
    throw new UnexpectedAnswerError('the device listed a key as a pairing whose descr names no pid')
  const created = Number.isSafeInteger(entry.created) ? entry.created : 0
  return { kid: entry.kid, label: typeof entry.label === 'string' ? entry.label : '', pid: toBase64(pid), created }
}

function safeBase64(text: string): Uint8Array | undefined {
  try {
    return fromBase64(text)
  } catch {
    return undefined
  }
}

function requestBody({ epk, scope, exp, ctx, note }: ExtRequestInput): Record<string, unknown> {
  const bytes = new TextEncoder().encode(scope).length
  if (bytes < 1 || bytes > 1023) throw new ExtInputError('scope must be 1 to 1023 bytes')
  if (exp !== undefined && (!Number.isSafeInteger(exp) || exp < 0))
    throw new ExtInputError('exp must be a time in Unix seconds')
  if (ctx !== undefined && (ctx.length < 1 || ctx.length > 64))
    throw new ExtInputError('ctx must be 1 to 64 characters')
  if (note !== undefined && (note.length < 1 || note.length > 128))
    throw new ExtInputError('note must be 1 to 128 characters')
  return {
    epk: key(epk),
    scope,
    ...(exp !== undefined ? { exp } : {}),
    ...(ctx !== undefined ? { ctx } : {}),
    ...(note !== undefined ? { note } : {}),
  }
}

function key(value: string, name = 'epk'): string {
  if (!isKey32(value)) throw new ExtInputError(`${name} must be 32 bytes in base64`)
  return value
}
