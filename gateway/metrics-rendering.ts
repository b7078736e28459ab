import { Registry } from 'prom-client'
import type { CommandReply } from '../protocol/index.js'
import { HttpError } from './errors.js'
import type { ReadContext } from './types.js'

/** What the 200 is, for the API description: prom-client's content type (Registry.contentType). */
export const METRICS_TEXT = {
  contentType: Registry.PROMETHEUS_CONTENT_TYPE,
  description: 'the Prometheus text exposition of the device (docs/metrics.md)',
}

/** `GET /metrics`: the Prometheus text exposition, in prom-client's content type. */
export async function renderMetrics(ctx: ReadContext): Promise<CommandReply> {
  if (!ctx.metrics) throw new HttpError(404, 'not_found', 'No such resource')
  const { body, contentType } = await ctx.metrics()
  return { status: 200, body, contentType }
}
