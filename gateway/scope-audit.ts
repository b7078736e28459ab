import type { Principal } from '../protocol/index.js'
import { BusUnavailableError, HttpError } from './errors.js'
import type { GatewayBus } from '../bus/index.js'
import type { Route } from './types.js'

/**
 * Every 403 for a wrong scope or role is journaled (FAILED_SCOPE_CHECK) before it is
 * answered; if the journal cannot take it, the request fails instead (fail-closed audit). The
 * auth service journals it under the principal it finds in the bearer token, not one the gateway names.
 */
export function scopeAudit(bus: GatewayBus) {
  return async (route: Route, _principal: Principal, rid: string, bearer: string): Promise<void> => {
    const reply = await bus.request('auth', 'denied', {
      rid,
      tls: false,
      bearer,
      body: { method: route.method, path: route.path },
    })
    // A full disk is said as such (507), like every other write it refuses.
    if (reply.status === 507)
      throw new HttpError(507, 'no_space', 'The device has no room left to store this; try again once space is freed')
    if (reply.status !== 200)
      throw new BusUnavailableError(`the scope failure could not be journaled (${reply.status})`)
  }
}
