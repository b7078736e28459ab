import type { CommandReply, TransportConfig } from '../protocol/index.js'
import { deviceFailState } from './device-view.js'
import type { ReadContext } from './types.js'

/**
 * `GET /api/system/status`. Optional keys appear only in the cases the contract names, because
 * clients test for their mere presence (e.g. `inited`).
 */
export function renderStatus(ctx: ReadContext): CommandReply {
  const { status, bootedAt } = ctx.system
  const { identity } = ctx
  const { transport } = identity
  const body: Record<string, unknown> = {
    ctx: identity.ctx,
    fls_state: deviceFailState(ctx),
    uptime: Math.floor((ctx.clock.monotonic() - bootedAt) / 1000),
    temp: status.temp,
  }
  if (ctx.clock.isSet()) {
    const now = ctx.clock.now()
    body.ts = isoSeconds(now)
    body.time = Math.floor(now / 1000)
  }
  if (!ctx.tls) body.https = true
  if (hostnameShown(transport, ctx.host)) body.hostname = transport.hostname
  if (!identity.inited) body.inited = false
  if (ctx.variant === 'P' && ctx.storage.storage) body.storage = ctx.storage.storage
  if (identity.format !== undefined) body.format = identity.format
  if (ctx.upgrade.fw_upgrade) body.fw_upgrade = true
  if (!identity.trusted_ts) body.tts = false
  if (ctx.principal) body.repo_stats = ctx.keystore.repo_stats
  // On a device given a fleet backend only: a stream that stopped matching the journal must be seen.
  if (status.mirror) body.mirror = status.mirror
  // Set by the owner, never a default: every page the owner visits may then call the routes that need no token.
  if (transport.origin === '*') body.origin = '*'
  return { status: 200, body }
}

/** Whether status names the device's hostname: the client reached it by another name. */
export function hostnameShown({ hostname }: TransportConfig, host: string): boolean {
  // A device not yet given a hostname has nothing to point the client to.
  return hostname !== '' && hostWithoutPort(host).toLowerCase() !== hostname.toLowerCase()
}

/** ISO 8601 in UTC without milliseconds, e.g. `2026-11-22T00:37:13Z`. */
export function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`
}

/** `host:port` → `host`, also for a bracketed IPv6 literal. */
export function hostWithoutPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1)
  const colon = host.indexOf(':')
  return colon === -1 ? host : host.slice(0, colon)
}
