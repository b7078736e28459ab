import type { Principal } from '../actors/bus/types.js'
import { BusUnavailableError } from './errors.js'
import type { GatewayBus, Route } from './types.js'

/**
 * Every 403 for a wrong scope or role is journaled (FAILED_SCOPE_CHECK) before it is
 * answered; if the journal cannot take it, the request fails instead (fail-closed audit).
 */
export function scopeAudit(bus: GatewayBus) {
  return async (route: Route, principal: Principal, rid: string): Promise<void> => {
    const reply = await bus.request('auth', 'denied', { rid, tls: false, principal, body: { method: route.method, path: route.path } })
    if (reply.status !== 200) throw new BusUnavailableError(`the scope failure could not be journaled (${reply.status})`)
  }
}
