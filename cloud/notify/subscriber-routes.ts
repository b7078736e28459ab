import { nonceTime } from '../../protocol/index.js'
import type { CloudRoute } from '../types.js'
import { agree, macMatches, type NotifyContext, route } from './notify-context.js'
import { b64, bytesField, type Fields, fieldsOf, MAX_FID, textField } from './notify-fields.js'
import { NotifyRefusal } from './notify-refusal.js'

/** How far a device nonce's time may be from the cloud's (contract §3.4.7). */
const NONCE_WINDOW = 300
const DAY = 86_400

/** The pairings of a device or an app (contract §3.4.7, §3.5.2): list, delete, refresh a push token. */
export function subscriberRoutes(ctx: NotifyContext): CloudRoute[] {
  return [
    route('POST', '/notify/subscribers/list', async (req) => {
      const eid = await deviceProof(ctx, fieldsOf(req.body), req.now)
      const pairings = await ctx.subscribers.ofDevice(eid)
      return {
        status: 200,
        body: pairings.map(({ pid, label, kid, aid, created }) => ({ pid, label, kid, aid, created })),
      }
    }),
    route('POST', '/notify/subscribers/delete', async (req) => {
      const fields = fieldsOf(req.body)
      const pid = bytesField(fields, 'pid')
      const byApp = fields.aid !== undefined
      const subscriber = byApp
        ? await appProof(ctx, fields, req.now).then(async (aid) => {
            const found = await ctx.subscribers.find(pid)
            return found?.aid === b64(aid) ? found : undefined
          })
        : await ctx.subscribers.ofDeviceFind(await deviceProof(ctx, fields, req.now), pid)
      if (!subscriber) throw new NotifyRefusal(404, 'not_found', 'no such pairing')
      await ctx.subscribers.remove(subscriber, req.now, !byApp)
      return { status: 200, body: { deleted: subscriber.pid } }
    }),
    route('POST', '/notify/subscribers/token', async (req) => {
      const fields = fieldsOf(req.body)
      const pid = bytesField(fields, 'pid')
      const aid = bytesField(fields, 'aid')
      const fid = textField(fields, 'fid', MAX_FID)
      const nonce = bytesField(fields, 'nonce')
      const mac = bytesField(fields, 'mac')
      // The body names no epk: the proof is made with the aid-bound key of today or yesterday.
      const message = new Uint8Array([...nonce, ...new TextEncoder().encode(fid)])
      const today = Math.floor(req.now / DAY)
      const proved = [today, today - 1].some((day) =>
        macMatches(agree(ctx.keys.ofDay('aid', aid, day), aid, 'aid'), message, mac),
      )
      if (!proved) throw new NotifyRefusal(401, 'bad_mac', 'mac does not prove this aid')
      await ctx.appNonces.spend(aid, nonce, req.now)
      const subscriber = await ctx.subscribers.find(pid)
      if (subscriber?.aid !== b64(aid)) throw new NotifyRefusal(404, 'not_found', 'no such pairing')
      await ctx.subscribers.activate({ ...subscriber, fid })
      return { status: 200, body: { status: 'updated' } }
    }),
  ]
}

/**
 * The device's proof `{nonce, mac, eid, epk}` (its `ext/mac` answer): epk the eid-bound key of eid, mac =
 * HMAC(S_db, nonce), the nonce's time within ±300 s and never seen; its eid, else a 401.
 */
async function deviceProof(ctx: NotifyContext, fields: Fields, now: number): Promise<Uint8Array> {
  const eid = bytesField(fields, 'eid')
  const epk = bytesField(fields, 'epk')
  const nonce = bytesField(fields, 'nonce')
  const mac = bytesField(fields, 'mac')
  const key = ctx.keys.find('eid', eid, epk, now)
  if (!key) throw new NotifyRefusal(401, 'unknown_session', 'epk is not a current broker key bound to this eid')
  if (!macMatches(agree(key, eid, 'eid'), nonce, mac)) throw new NotifyRefusal(401, 'bad_mac', 'mac does not prove eid')
  if (Math.abs(nonceTime(nonce) - now) > NONCE_WINDOW) {
    throw new NotifyRefusal(401, 'stale_nonce', 'the nonce is not of the last 5 minutes')
  }
  await ctx.deviceNonces.spend(eid, nonce, now)
  return eid
}

/** The app's proof `{epk, nonce, mac, aid}`: epk the aid-bound key of aid, mac = HMAC(S_ab′, nonce), nonce unseen. */
async function appProof(ctx: NotifyContext, fields: Fields, now: number): Promise<Uint8Array> {
  const aid = bytesField(fields, 'aid')
  const epk = bytesField(fields, 'epk')
  const nonce = bytesField(fields, 'nonce')
  const mac = bytesField(fields, 'mac')
  const key = ctx.keys.find('aid', aid, epk, now)
  if (!key) throw new NotifyRefusal(401, 'unknown_session', 'epk is not a current broker key bound to this aid')
  if (!macMatches(agree(key, aid, 'aid'), nonce, mac)) throw new NotifyRefusal(401, 'bad_mac', 'mac does not prove aid')
  await ctx.appNonces.spend(aid, nonce, now)
  return aid
}
