import type { CommandReply } from '../protocol/index.js'
import { HttpError } from './errors.js'
import type { ReadContext } from './types.js'

/** `GET /metrics`: the Prometheus text exposition, in prom-client's content type. */
export async function renderMetrics(ctx: ReadContext): Promise<CommandReply> {
  if (!ctx.metrics) throw new HttpError(404, 'not_found', 'No such resource')
  const { body, contentType } = await ctx.metrics()
  return { status: 200, body, contentType }
}
