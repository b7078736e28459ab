import { extAuthKid, extJwtSigned } from '../../protocol/index.js'
import type { CloudRequest, CloudRoute } from '../types.js'
import { agree, claimIs, macMatches, type NotifyContext, parseJwtField, route } from './notify-context.js'
import { b64, bytesField, fieldsOf, MAX_JWT, newId, pathId, textField } from './notify-fields.js'
import { REGISTRATION_LIFETIME, type Registration } from './notify-records.js'
import { gone, NotifyRefusal } from './notify-refusal.js'
import { loadRegistration } from './registration-load.js'

/** The device-facing pairing routes (contract §3.4.2–§3.4.4) and the test mode's pending list (§3.5.1). */
export function registerRoutes(ctx: NotifyContext): CloudRoute[] {
  return [
    route('POST', '/notify/register/init', (req) => registerInit(ctx, req)),
    route('GET', '/notify/register/check/:rid', async (req) => {
      const { value: reg } = await loadRegistration(ctx, req.params.rid, req.now)
      if (reg.state === 'refused') throw gone('refused', 'the phone refused the pairing')
      if (reg.state === 'paired') return { status: 200, body: { pid: reg.answer?.pid, status: 'paired' } }
      if (req.now >= reg.exp) throw gone('expired', 'the registration expired')
      if (reg.state === 'open') return { status: 202, body: { status: 'pending' } }
      return { status: 200, body: { pid: reg.answer?.pid, reply: reg.answer?.reply } }
    }),
    route('POST', '/notify/register/finalise/:rid', (req) => finalise(ctx, req)),
    route('GET', '/notify/register/pending', async (req) => {
      if (!ctx.testMode) throw new NotifyRefusal(404, 'not_found', 'no such route')
      const open = []
      for (const rid of await ctx.store.registrations.keys()) {
        const reg = (await ctx.store.registrations.get(rid))?.value
        if (reg?.state === 'open' && req.now < reg.exp) {
          open.push({ rid, link: linkOf(ctx, rid), eid: reg.eid, exp: reg.exp })
        }
      }
      return { status: 200, body: open }
    }),
  ]
}

function linkOf(ctx: NotifyContext, rid: string): string {
  return `${ctx.publicUrl}/notify/register/challenge/${rid}`
}

async function registerInit(ctx: NotifyContext, req: CloudRequest) {
  const fields = fieldsOf(req.body)
  const epk = bytesField(fields, 'epk')
  const eid = bytesField(fields, 'eid')
  const requestText = textField(fields, 'request', MAX_JWT)
  const request = parseJwtField(requestText, 'request')
  const key = ctx.keys.find('eid', eid, epk, req.now)
  if (!key) throw new NotifyRefusal(401, 'unknown_session', 'epk is not a current broker key bound to this eid')
  if (!extJwtSigned(request, agree(key, eid, 'eid'))) {
    throw new NotifyRefusal(401, 'bad_signature', 'request is not signed by this eid for this epk')
  }
  const { iss, aud, exp, jti } = request.payload
  if (!claimIs(iss, eid) || !claimIs(aud, epk)) throw new NotifyRefusal(401, 'bad_claims', 'request iss/aud mismatch')
  if (typeof exp !== 'number' || exp <= req.now) throw new NotifyRefusal(401, 'expired', 'request has expired')
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 64) {
    throw new NotifyRefusal(401, 'bad_claims', 'request jti must be a short string')
  }
  await ctx.registerRate.take(eid, req.now)
  const rid = newId(ctx.random)
  const registration: Registration = {
    ...{ rid, eid: b64(eid), epk: b64(epk), epkDay: key.day, request: requestText, jti },
    ...{ exp: Math.min(exp, req.now + REGISTRATION_LIFETIME), ip: req.ip, state: 'open' },
  }
  await ctx.store.registrations.put(rid, registration)
  return { status: 200, body: { rid, link: linkOf(ctx, rid), exp: registration.exp } }
}

/** `POST /notify/register/finalise/<rid> {kid, code}`: the device accepted the reply; the pairing becomes active. */
async function finalise(ctx: NotifyContext, req: CloudRequest) {
  const fields = fieldsOf(req.body)
  const kid = textField(fields, 'kid', 32, 32)
  if (!/^[0-9a-f]{32}$/.test(kid)) throw new NotifyRefusal(400, 'bad_field', 'kid: must be 32 lower-case hex digits')
  const code = bytesField(fields, 'code')
  const rid = pathId(req.params.rid, 'registration')
  for (;;) {
    const { value: reg, revision } = await loadRegistration(ctx, rid, req.now)
    const { answer } = reg
    if (reg.state === 'paired' && answer) {
      if (!claimIs(reg.code, code)) throw new NotifyRefusal(401, 'bad_code', 'code does not match the pairing')
      return { status: 200, body: { pid: answer.pid, status: 'paired' } }
    }
    if (req.now >= reg.exp) throw new NotifyRefusal(404, 'not_found', 'the registration expired')
    if (reg.state !== 'replied' || !answer?.reply) {
      throw new NotifyRefusal(409, 'not_replied', 'the phone has not replied to this registration')
    }
    const eid = Buffer.from(reg.eid, 'base64')
    const sDb = agree(ctx.keys.ofDay('eid', eid, reg.epkDay), eid, 'eid')
    if (!macMatches(sDb, answer.reply, code)) throw new NotifyRefusal(401, 'bad_code', 'code does not match the reply')
    if (kid !== extAuthKid(Buffer.from(answer.aid, 'base64'))) {
      ctx.warn(`register/finalise ${rid}: the device's kid ${kid} is not the KID of the phone's aid`)
    }
    const { pid, aid, fid, label } = answer
    await ctx.subscribers.activate({ pid, eid: reg.eid, aid, kid, fid, label, created: req.now })
    // The reply is handed on: the pairing keeps only what routes events and the code that proves a repeat.
    const closed: Registration = { ...reg, state: 'paired', answer: { pid, aid, fid, label }, code: b64(code) }
    if (await ctx.store.registrations.update(rid, { ...closed, closedAt: req.now }, revision)) {
      return { status: 200, body: { pid, status: 'paired' } }
    }
  }
}
