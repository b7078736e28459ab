import { decodeBase64, EXT_AUTH_MAX_PAIRINGS, extJwtSigned, pidx } from '../../protocol/index.js'
import type { CloudRequest, CloudRoute } from '../types.js'
import { loadEvent } from './event-load.js'
import { agree, claimIs, type NotifyContext, parseJwtField, route } from './notify-context.js'
import { b64, bytesField, fieldsOf, MAX_JWT, newId, textField } from './notify-fields.js'
import type { NotifyEvent } from './notify-records.js'
import { gone, NotifyRefusal } from './notify-refusal.js'
import { NO_SUBJECT } from './session-keys.js'

/** A device's clock may run this far ahead of the cloud's (contract §3.4.5, §6.11). */
const IAT_SKEW = 30
/** Decision: an authreq lives 3600 s at most (§1.4), so one meant to live longer is no device's. */
const MAX_EVENT_LIFETIME = 3600 + IAT_SKEW
/** The longest sealed scope entry: a 1023-byte scope with its key hint, padded, tagged and in base64. */
const MAX_ENTRY = 2048

/** The client's side of an approval (contract §3.4.5, §3.4.6): post the authreq, poll the answer, give up. */
export function eventRoutes(ctx: NotifyContext): CloudRoute[] {
  return [
    route('POST', '/notify/event/new', (req) => newEvent(ctx, req)),
    route('GET', '/notify/event/check/:eventid', async (req) => {
      const { value: event } = await loadEvent(ctx, req.params.eventid, req.now)
      if (event.state === 'allowed') return { status: 200, body: { authreply: event.authreply, pid: event.pid } }
      if (event.state === 'denied') return { status: 200, body: { deny: true, pid: event.pid } }
      if (event.state === 'withdrawn') throw gone('withdrawn', 'the client withdrew the request')
      if (req.now >= event.exp) throw gone('expired', 'the request expired unanswered')
      return { status: 202, body: { status: 'pending' } }
    }),
    route('DELETE', '/notify/event/:eventid', async (req) => {
      for (;;) {
        const { value: event, revision } = await loadEvent(ctx, req.params.eventid, req.now)
        if (event.state !== 'pending' || req.now >= event.exp) {
          const reason = event.state === 'pending' ? 'expired' : event.state === 'withdrawn' ? 'withdrawn' : 'answered'
          throw gone(reason, 'the request is closed')
        }
        const withdrawn: NotifyEvent = { ...event, state: 'withdrawn', closedAt: req.now }
        if (await ctx.store.events.update(event.eventid, withdrawn, revision)) {
          return { status: 200, body: { deleted: true } }
        }
      }
    }),
  ]
}

/** The authreq's sealed scopes by pid: at most one per pairing a device can hold. */
function scopeEntries(scope: unknown): Array<[Uint8Array, string]> {
  const bad = () => new NotifyRefusal(400, 'bad_field', 'authreq scope: an object of pid to sealed scope')
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope)) throw bad()
  const entries = Object.entries(scope)
  if (entries.length > EXT_AUTH_MAX_PAIRINGS) throw bad()
  return entries.map(([pid, sealed]) => {
    const bytes = decodeBase64(pid)
    if (bytes?.length !== 32 || typeof sealed !== 'string' || sealed.length > MAX_ENTRY) throw bad()
    return [bytes, sealed]
  })
}

/** `POST /notify/event/new {authreq, epk}`: the device's request, routed to its active pairings among the targets. */
async function newEvent(ctx: NotifyContext, req: CloudRequest) {
  const fields = fieldsOf(req.body)
  const authreq = parseJwtField(textField(fields, 'authreq', MAX_JWT), 'authreq')
  const epk = bytesField(fields, 'epk')
  const { iss, aud, iat, exp, jti, scope } = authreq.payload
  const eid = typeof iss === 'string' ? decodeBase64(iss) : undefined
  if (eid?.length !== 32 || typeof iat !== 'number' || typeof exp !== 'number') {
    throw new NotifyRefusal(400, 'bad_field', 'authreq: iss, iat and exp are required')
  }
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 64) {
    throw new NotifyRefusal(400, 'bad_field', 'authreq jti: a short string')
  }
  const entries = scopeEntries(scope)
  const key = ctx.keys.find('anonymous', NO_SUBJECT, epk, req.now)
  if (!key) throw new NotifyRefusal(404, 'unknown_session', 'epk is not a current anonymous broker key')
  if (!extJwtSigned(authreq, agree(key, eid, 'iss'))) {
    throw new NotifyRefusal(401, 'bad_signature', 'authreq is not signed by its iss for this epk')
  }
  if (!claimIs(aud, epk)) throw new NotifyRefusal(401, 'bad_claims', 'authreq aud is not this epk')
  if (exp <= req.now || exp > req.now + MAX_EVENT_LIFETIME || iat > req.now + IAT_SKEW) {
    throw new NotifyRefusal(401, 'bad_time', 'authreq is expired, too long-lived or from the future')
  }
  await ctx.eventRate.take(eid, req.now)
  const targets: Record<string, string> = {}
  for (const [pid, sealed] of entries) {
    if (await ctx.subscribers.ofDeviceFind(eid, pid)) targets[pidx(b64(pid))] = sealed
  }
  const eventid = newId(ctx.random)
  const event: NotifyEvent = {
    ...{ eventid, eid: b64(eid), epk: b64(epk), epkDay: key.day, jti, exp, ip: req.ip },
    ...{ entries: targets, state: 'pending' },
  }
  // The event last: it is what makes the inbox entries count (allbypid skips an entry without its pending event), so
  // a request cut short by a lost node (503) leaves nothing a phone sees, and the client's retry a whole event.
  for (const target of Object.keys(targets)) await ctx.store.inbox.put(`${target}.${eventid}`, exp)
  await ctx.store.events.put(eventid, event)
  const sentcnt = Object.keys(targets).length
  return { status: 200, body: { eventid, sentcnt, exp, ipinfo_you: { ip: req.ip } } }
}
