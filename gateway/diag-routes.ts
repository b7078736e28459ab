import type { AUTH_DIAG_OPS, CommandReply, KEYSTORE_DIAG_OPS, SYSTEM_DIAG_OPS } from '../protocol/index.js'
import { apiDescription } from './api-description.js'
import type { TlsBreaker } from './tls-breaker.js'
import type { Route, RouteHandler } from './types.js'

const EMPTY: CommandReply = { status: 200 }
const API_DESCRIPTION_PATH = '/api/openapi.json'

/** A service's DIAG operation, named from the shared vocabulary (protocol/diag.ts). */
type DiagOp =
  | ['system', (typeof SYSTEM_DIAG_OPS)[number]]
  | ['keystore', (typeof KEYSTORE_DIAG_OPS)[number]]
  | ['auth', (typeof AUTH_DIAG_OPS)[number]]

/**
 * The DIAG build's routes (crypto-contract §6), which the gateway adds to its table only under
 * `hemd --diag`: GET, no token (a present one must still be valid), HTTP and HTTPS, both variants,
 * served in a fail state and before personalisation (no `healthy`). The services behind them
 * check their own parameters; `test` and `break_tls` are the gateway's own.
 */
export function diagRoutes(tls: TlsBreaker): Route[] {
  const route = (path: string, handler: RouteHandler, extra: Partial<Route> = {}): Route => ({
    method: 'GET',
    path: `/api/diag/${path}`,
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    diag: true,
    ...extra,
    handler,
  })
  const command = (...[service, op]: DiagOp): RouteHandler => ({ kind: 'command', service, op })
  return [
    route('test', { kind: 'local', answer: () => EMPTY }),
    route('break_temp', command('system', 'diag_break_temp')),
    route('break_trng', command('system', 'diag_break_trng')),
    route('break_tls', {
      kind: 'local',
      answer: () => {
        tls.arm()
        return EMPTY
      },
    }),
    route('test_trng', command('system', 'diag_test_trng')),
    route('disable_selftest', command('system', 'diag_disable_selftest')),
    // A wipeout erases the enclave and both disks, then the device restarts: the answer says it
    // is done and the connection goes with it.
    route('wipe_config', command('auth', 'diag_wipe_config'), { deadline: 'long', closes: true }),
    route('memdump/:addr/:len', command('keystore', 'diag_memdump')),
    route('corrupt_repo/:addr', command('keystore', 'diag_corrupt_repo')),
  ]
}

/**
 * `table` and the DIAG routes, as the DIAG build serves them: its `/api/openapi.json` describes the routes it
 * serves, the DIAG ones too, each marked DIAG-only. A normal build's document (and deploy/openapi.json) has none.
 */
export function withDiagRoutes(table: readonly Route[], tls: TlsBreaker): Route[] {
  const routes: Route[] = table.map((route) =>
    route.path === API_DESCRIPTION_PATH && route.handler.kind === 'read'
      ? { ...route, handler: { kind: 'read', render: apiDescription(() => routes) } }
      : route,
  )
  routes.push(...diagRoutes(tls))
  return routes
}
