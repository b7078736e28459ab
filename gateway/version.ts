import type { CommandReply } from '../protocol/index.js'
import type { ReadContext } from './types.js'

/** `GET /api/system/version`: the card's microSD registers only on P and only with a valid token. */
export function renderVersion(ctx: ReadContext): CommandReply {
  const { hwv, fwv, fwk, fws, blv, blk, bls, sd_csd, sd_cid } = ctx.system.version
  const { uis } = ctx.upgrade
  const body: Record<string, string> = { hwv, fwv, fwk, fws, blv, blk, bls }
  if (uis !== undefined) body.uis = uis
  if (ctx.variant === 'P' && ctx.principal) {
    if (sd_csd !== undefined) body.sd_csd = sd_csd
    if (sd_cid !== undefined) body.sd_cid = sd_cid
  }
  return { status: 200, body }
}
