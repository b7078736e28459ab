import type { CloudRequest, CloudRoute } from '../types.js'
import { loadEvent } from './event-load.js'
import { agree, claimIs, ipinfo, macMatches, type NotifyContext, parseJwtField, route } from './notify-context.js'
import { b64, bytesField, fieldsOf, keyName, MAX_JWT, pathBytes, textField } from './notify-fields.js'
import type { NotifyEvent } from './notify-records.js'
import { gone, NotifyRefusal } from './notify-refusal.js'
import { NO_SUBJECT } from './session-keys.js'

const PATTERN = '/notify/event/data/:eventid/:pidx'
/** The most pids one `allbypid` call may ask about (a phone holds one per device it is paired with). */
export const MAX_PIDS = 64

/** The authenticator's side of an approval (contract §3.5.2): find events, read its entry, allow or deny. */
export function eventDataRoutes(ctx: NotifyContext): CloudRoute[] {
  return [
    route('POST', '/notify/event/data/allbypid', (req) => allByPid(ctx, req)),
    route('GET', PATTERN, async (req) => {
      const { event, pid } = await pendingTarget(ctx, req)
      const body = { jti: event.jti, scope: event.entries[keyName(pid)], epk: event.epk, exp: event.exp }
      return { status: 200, body: { ...body, ipinfo_eid: ipinfo(event.ip) } }
    }),
    route('POST', PATTERN, (req) => allow(ctx, req)),
    route('DELETE', PATTERN, async (req) => {
      const { event, revision, pid } = await pendingTarget(ctx, req)
      const denied: NotifyEvent = { ...event, state: 'denied', pid: b64(pid), closedAt: req.now }
      if (!(await ctx.store.events.update(event.eventid, denied, revision))) throw answeredElsewhere()
      return { status: 200, body: { status: 'denied' } }
    }),
  ]
}

function answeredElsewhere(): NotifyRefusal {
  return gone('answered', 'the request was answered already')
}

/**
 * The event of the path, pending and addressed to the path's pid: 404 unknown, expired or not the pid's,
 * 410 withdrawn (`cancelled`) or answered.
 */
async function pendingTarget(ctx: NotifyContext, req: CloudRequest) {
  const pid = pathBytes(req.params.pidx, 'pairing')
  const { value: event, revision } = await loadEvent(ctx, req.params.eventid, req.now)
  if (event.entries[keyName(pid)] === undefined) throw new NotifyRefusal(404, 'not_found', 'no such event')
  if (event.state === 'withdrawn') throw gone('cancelled', 'the client withdrew the request')
  if (event.state !== 'pending') throw answeredElsewhere()
  if (req.now >= event.exp) throw new NotifyRefusal(404, 'not_found', 'the request expired')
  return { event, revision, pid }
}

/** `POST <path> {authreply, mac}`: the phone's approval, proved with S_ab; the first answer wins. */
async function allow(ctx: NotifyContext, req: CloudRequest) {
  const fields = fieldsOf(req.body)
  const authreplyText = textField(fields, 'authreply', MAX_JWT)
  const mac = bytesField(fields, 'mac')
  const { event, revision, pid } = await pendingTarget(ctx, req)
  const eid = Buffer.from(event.eid, 'base64')
  const subscriber = await ctx.subscribers.ofDeviceFind(eid, pid)
  if (!subscriber) throw new NotifyRefusal(404, 'not_found', 'the pairing was removed')
  const aid = Buffer.from(subscriber.aid, 'base64')
  const sAb = agree(ctx.keys.ofDay('anonymous', NO_SUBJECT, event.epkDay), aid, 'aid')
  if (!macMatches(sAb, authreplyText, mac)) throw new NotifyRefusal(401, 'bad_mac', 'mac does not prove this pairing')
  // The device verifies the authreply (S_pair); the broker checks that it answers this event for this pairing.
  const { jti, pid: claimedPid, iss, aud } = parseJwtField(authreplyText, 'authreply').payload
  if (jti !== event.jti || !claimIs(claimedPid, pid) || !claimIs(iss, aid) || !claimIs(aud, eid)) {
    throw new NotifyRefusal(400, 'bad_authreply', 'authreply does not answer this event for this pairing')
  }
  const allowed: NotifyEvent = {
    ...event,
    state: 'allowed',
    pid: b64(pid),
    authreply: authreplyText,
    closedAt: req.now,
  }
  if (!(await ctx.store.events.update(event.eventid, allowed, revision))) throw answeredElsewhere()
  return { status: 200, body: { status: 'posted' } }
}

/** `POST /notify/event/data/allbypid {pid: [...]}`: the pending events of these pids, and pairings the device ended. */
async function allByPid(ctx: NotifyContext, req: CloudRequest) {
  const asked = fieldsOf(req.body).pid
  if (!Array.isArray(asked) || asked.length > MAX_PIDS) {
    throw new NotifyRefusal(400, 'bad_field', `pid: an array of at most ${MAX_PIDS} pids`)
  }
  const pids = asked.map((pid: unknown, i) => bytesField({ [`pid[${i}]`]: pid }, `pid[${i}]`))
  const events: Record<string, string[]> = {}
  const pairing: Record<string, string> = {}
  for (const pid of pids) {
    if (await ctx.subscribers.wasRemoved(pid)) pairing[b64(pid)] = 'DELETED'
  }
  const live = pids.filter((pid) => pairing[b64(pid)] === undefined)
  // One filter per pid: a server before 2.10 takes no list of filters.
  const keys = []
  for (const pid of live) keys.push(...(await ctx.store.inbox.keys(`${keyName(pid)}.*`)))
  for (const key of keys) {
    const [target = '', eventid = ''] = key.split('.')
    const event = (await ctx.store.events.get(eventid))?.value
    if (event?.state !== 'pending' || req.now >= event.exp || event.entries[target] === undefined) continue
    ;(events[eventid] ??= []).push(b64(Buffer.from(target, 'base64url')))
  }
  const body: Record<string, unknown> = { eventid: Object.keys(events).length ? events : [] }
  if (Object.keys(pairing).length) body.pairing = pairing
  return { status: 200, body }
}
