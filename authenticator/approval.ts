import { EXT_PERIODS, fixedBase64, fromBase64, toBase64, type AuthreplyClaims } from '../protocol/browser.js'
import type { AidKey, ScopeCipher } from './aid-key.js'
import { openScopeWith, sealScopeWith } from './scope-sealing.js'
import { signExtJwtWith } from './sign-ext-jwt-with.js'

/** One event as `GET /notify/event/data/<eventid>/<pidx>` gives it to this pairing (§3.5.2). */
export interface EventData {
  jti: string
  /** This pairing's sealed entry of the authreq's scope (`A…`). */
  scope: string
  epk: Uint8Array
  exp: number
  ipinfo?: { ip?: string; city?: string; country?: string }
  ctx?: string
}

/** The pairing's keys an approval needs, and the provider's cipher for its scope. */
export interface ApprovalKeys {
  aidKey: AidKey
  eid: Uint8Array
  pid: string
  cipher: ScopeCipher
}

/** An event opened for its user: what to show and what an answer needs. */
export interface OpenedEvent {
  event: EventData
  /** The sealed text: the scope, with a key hint after `#` for `keymgmt:use:<kid>`. */
  scope: string
  /** The key the hint names (§1.4: `t` the type word, `l` the label), when there is one. */
  key?: { type: string; label: string }
  /** A `storage:` scope: the user may add or remove `:rw`. */
  writeSwitch: boolean
  writable: boolean
}

export type Period = (typeof EXT_PERIODS)[number]

const MAX_CTX = 64

/** The answer's fields, checked; undefined when it is not an event this authenticator can answer. */
export function readEventData(body: unknown): EventData | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const { jti, scope, epk, exp, ipinfo_eid: ipinfo, ctx } = body as Record<string, unknown>
  const epkBytes = fixedBase64(epk, 32)
  if (typeof jti !== 'string' || !decoded(jti) || typeof scope !== 'string' || !epkBytes) return undefined
  if (typeof exp !== 'number' || !Number.isSafeInteger(exp)) return undefined
  const event: EventData = { jti, scope, epk: epkBytes, exp }
  if (typeof ipinfo === 'object' && ipinfo !== null) event.ipinfo = shownIpinfo(ipinfo as Record<string, unknown>)
  if (typeof ctx === 'string' && ctx.length <= MAX_CTX) event.ctx = ctx
  return event
}

/**
 * Opens the event's scope (§2.5) with K from S_pair and the jti; undefined when the event has expired or
 * its tag does not verify (§4.2: refuse silently).
 */
export async function openEvent(event: EventData, keys: ApprovalKeys, now: number): Promise<OpenedEvent | undefined> {
  if (now > event.exp) return undefined
  const jti = decoded(event.jti)
  if (!jti) return undefined
  const scope = await openScopeWith(keys.cipher, await keys.aidKey.agree(keys.eid), event.scope, jti)
  if (scope === undefined) return undefined
  const [asked = '', hint] = splitHint(scope)
  const writeSwitch = asked.startsWith('storage:')
  const opened: OpenedEvent = { event, scope, writeSwitch, writable: writeSwitch && asked.endsWith(':rw') }
  const key = hint === undefined ? undefined : keyHint(hint)
  if (key) opened.key = key
  return opened
}

/** The scope to grant: as sealed, except the write switch of a `storage:` scope (§4.2, decision §6.4). */
export function grantedScope(opened: OpenedEvent, writable = opened.writable): string {
  if (!opened.writeSwitch) return opened.scope
  const base = opened.scope.endsWith(':rw') ? opened.scope.slice(0, -':rw'.length) : opened.scope
  return writable ? `${base}:rw` : base
}

/** The allow answer's body (§2.4.4, §2.6): `authreply` signed with S_pair, `mac` = HMAC(S_ab, authreply). */
export async function buildAuthreply(
  opened: OpenedEvent,
  keys: ApprovalKeys,
  grant: { scope: string; period: Period; now: number },
): Promise<{ authreply: string; mac: string }> {
  const { event } = opened
  const sPair = await keys.aidKey.agree(keys.eid)
  const jti = decoded(event.jti) as Uint8Array
  const claims: AuthreplyClaims = {
    aud: toBase64(keys.eid),
    jti: event.jti,
    exp: grant.now + grant.period,
    iat: grant.now,
    pid: keys.pid,
    iss: toBase64(keys.aidKey.aid),
    scope: await sealScopeWith(keys.cipher, sPair, grant.scope, jti),
    ...(event.ctx === undefined ? {} : { ctx: event.ctx }),
  }
  const authreply = await signExtJwtWith(sPair, { ...claims })
  const sAb = await keys.aidKey.agree(event.epk)
  return { authreply, mac: toBase64(await sAb.hmac(new TextEncoder().encode(authreply))) }
}

export function isPeriod(value: number): value is Period {
  return (EXT_PERIODS as readonly number[]).includes(value)
}

function splitHint(scope: string): [string, string | undefined] {
  const at = scope.indexOf('#')
  return at < 0 ? [scope, undefined] : [scope.slice(0, at), scope.slice(at + 1)]
}

/** The `#` suffix of a `keymgmt:use:<kid>` scope: b64 JSON `{t, l}`; undefined when it does not parse. */
function keyHint(hint: string): { type: string; label: string } | undefined {
  const bytes = decoded(hint)
  if (!bytes) return undefined
  try {
    const { t, l } = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as Record<string, unknown>
    return typeof t === 'string' && typeof l === 'string' ? { type: t, label: l } : undefined
  } catch {
    return undefined
  }
}

function shownIpinfo(info: Record<string, unknown>): { ip?: string; city?: string; country?: string } {
  const shown: { ip?: string; city?: string; country?: string } = {}
  for (const name of ['ip', 'city', 'country'] as const) {
    const value = info[name]
    if (typeof value === 'string' && value.length <= 64) shown[name] = value
  }
  return shown
}

/** Base64 of any length (a jti is 32 bytes from a device, 16 in [A]'s vectors); undefined when it is none. */
function decoded(text: unknown): Uint8Array | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined
  try {
    return fromBase64(text)
  } catch {
    return undefined
  }
}
