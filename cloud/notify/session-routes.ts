import type { CloudRoute } from '../types.js'
import { type NotifyContext, route } from './notify-context.js'
import { b64, bytesField, fieldsOf } from './notify-fields.js'
import { NotifyRefusal } from './notify-refusal.js'
import { NO_SUBJECT } from './session-keys.js'

/** `GET /notify/session` (anonymous key) and `POST /notify/session {eid}|{aid}` (bound keys), contract §3.4.1. */
export function sessionRoutes(ctx: NotifyContext): CloudRoute[] {
  return [
    route('GET', '/notify/session', async (req) => {
      const { epk, exp } = ctx.keys.issue('anonymous', NO_SUBJECT, req.now)
      return { status: 200, body: { epk: b64(epk), exp } }
    }),
    route('POST', '/notify/session', async (req) => {
      const fields = fieldsOf(req.body)
      if ((fields.eid === undefined) === (fields.aid === undefined)) {
        throw new NotifyRefusal(400, 'bad_body', 'give exactly one of eid and aid')
      }
      if (fields.aid !== undefined) {
        const { epk, exp } = ctx.keys.issue('aid', bytesField(fields, 'aid'), req.now)
        return { status: 200, body: { epk: b64(epk), exp } }
      }
      const eid = bytesField(fields, 'eid')
      const { epk, exp } = ctx.keys.issue('eid', eid, req.now)
      return { status: 200, body: { epk: b64(epk), exp, paired: await ctx.subscribers.anyOf(eid) } }
    }),
  ]
}
