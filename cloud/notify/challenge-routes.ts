import type { CloudRequest, CloudRoute } from '../types.js'
import { agree, claimIs, ipinfo, macMatches, type NotifyContext, parseJwtField, route } from './notify-context.js'
import { b64, bytesField, fieldsOf, MAX_FID, MAX_JWT, textField } from './notify-fields.js'
import type { Registration } from './notify-records.js'
import { gone, NotifyRefusal } from './notify-refusal.js'
import { loadRegistration } from './registration-load.js'

const PATTERN = '/notify/register/challenge/:rid'
/** The label the device stores too when the phone gives none (contract §1.2). */
const DEFAULT_LABEL = 'ExtAuth'

/** The registration link the phone opens (contract §3.5.1): read the request, answer it, or refuse it. */
export function challengeRoutes(ctx: NotifyContext): CloudRoute[] {
  return [
    route('GET', PATTERN, async (req) => {
      const reg = await openRegistration(ctx, req)
      return { status: 200, body: { request: reg.value.request, ipinfo_eid: ipinfo(reg.value.ip) } }
    }),
    route('POST', PATTERN, (req) => answer(ctx, req)),
    route('DELETE', PATTERN, async (req) => {
      for (;;) {
        const { value: reg, revision } = await loadRegistration(ctx, req.params.rid, req.now)
        if (reg.state === 'refused') return { status: 200, body: { status: 'refused' } }
        if (reg.state !== 'open') throw new NotifyRefusal(409, 'already_answered', 'the registration was answered')
        if (req.now >= reg.exp) throw new NotifyRefusal(404, 'not_found', 'the registration expired')
        const refused: Registration = { ...reg, state: 'refused', closedAt: req.now }
        if (await ctx.store.registrations.update(reg.rid, refused, revision)) {
          return { status: 200, body: { status: 'refused' } }
        }
      }
    }),
  ]
}

/** A registration still waiting for the phone: 404 unknown or expired, 410 answered. */
async function openRegistration(ctx: NotifyContext, req: CloudRequest) {
  const found = await loadRegistration(ctx, req.params.rid, req.now)
  if (found.value.state !== 'open') throw gone('answered', 'the registration was answered')
  if (req.now >= found.value.exp) throw new NotifyRefusal(404, 'not_found', 'the registration expired')
  return found
}

/** `POST <link> {reply, fid, mac, aid}`: the phone's reply, proved with S_ab; the broker assigns the pid. */
async function answer(ctx: NotifyContext, req: CloudRequest) {
  const fields = fieldsOf(req.body)
  const replyText = textField(fields, 'reply', MAX_JWT)
  const fid = textField(fields, 'fid', MAX_FID)
  const mac = bytesField(fields, 'mac')
  const aid = bytesField(fields, 'aid')
  const loaded = await loadRegistration(ctx, req.params.rid, req.now)
  const { value: reg, revision } = loaded
  if (reg.state !== 'open') throw new NotifyRefusal(409, 'already_answered', 'the registration was answered')
  if (req.now >= reg.exp) throw new NotifyRefusal(404, 'not_found', 'the registration expired')
  const eid = Buffer.from(reg.eid, 'base64')
  const sAb = agree(ctx.keys.ofDay('eid', eid, reg.epkDay), aid, 'aid')
  if (!macMatches(sAb, replyText + fid, mac)) throw new NotifyRefusal(401, 'bad_mac', 'mac does not prove this aid')
  // The broker cannot verify the reply (S_pair is the device's and the phone's): it checks that it answers this one.
  const { jti, iss, aud, epk, label } = parseJwtField(replyText, 'reply').payload
  if (jti !== reg.jti || !claimIs(iss, aid) || !claimIs(aud, eid) || !claimIs(epk, Buffer.from(reg.epk, 'base64'))) {
    throw new NotifyRefusal(400, 'bad_reply', 'reply does not answer this registration')
  }
  const pid = b64(ctx.random(32))
  const answered: Registration = {
    ...reg,
    state: 'replied',
    answer: { pid, aid: b64(aid), fid, label: labelOf(label), reply: replyText },
  }
  if (!(await ctx.store.registrations.update(reg.rid, answered, revision))) {
    throw new NotifyRefusal(409, 'already_answered', 'the registration was answered')
  }
  return { status: 200, body: { pid, url: `${ctx.publicUrl}/notify/event/` } }
}

/** The phone's label as the device keeps it: 32 printable ASCII characters at most (contract §1.2, §6.16). */
function labelOf(label: unknown): string {
  const printable = typeof label === 'string' ? label.replace(/[^\x20-\x7e]/g, '').slice(0, 32) : ''
  return printable || DEFAULT_LABEL
}
