import { renderStatus } from './status.js'
import type { Route } from './types.js'
import { renderVersion } from './version.js'

/** Every route the device answers; the gateway, the OpenAPI document and the route-matrix tests read this. */
export const routeTable: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/system/version',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'read', render: renderVersion },
  },
  {
    method: 'GET',
    path: '/api/system/status',
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'read', render: renderStatus },
  },
]
