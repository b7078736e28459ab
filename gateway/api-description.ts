import type { CommandReply } from '../protocol/index.js'
import { openApiDocument } from './openapi.js'
import type { ReadContext, Route } from './types.js'

/**
 * `GET /api/openapi.json`: the running firmware's API, described by its own route table. Built on
 * first request (the table names this route too, so it cannot be built while the table is) and
 * kept until the firmware version changes.
 */
export function apiDescription(routes: () => readonly Route[]): (ctx: ReadContext) => CommandReply {
  let built: { version: string; document: Record<string, unknown> } | undefined
  return (ctx) => {
    const version = ctx.system.version.fwv
    if (built?.version !== version) built = { version, document: openApiDocument(routes(), version) }
    return { status: 200, body: built.document }
  }
}
