import type { TSchema } from '@sinclair/typebox'
import type { Logger } from 'pino'
import type {
  CommandReply,
  CommandRequest,
  DeadlineClass,
  IdentityState,
  KeystoreState,
  Principal,
  Role,
  StorageState,
  SystemState,
  UpgradeState,
  Variant,
} from '../protocol/index.js'
import type { Clock, WebrootStore } from '../hal/index.js'
import type { GatewayBus } from '../bus/index.js'
import type { ServedTls } from './served-tls.js'
import type { Exposition } from '../metrics/index.js'
import type { DeviceMetrics } from './device-metrics.js'

export type Method = 'GET' | 'POST' | 'DELETE'

/**
 * `open`: no token needed (a present one must still be valid).
 * `token-unless-fresh`: a token is needed once the device is personalised.
 */
export type AuthMode = 'open' | 'token' | 'token-unless-fresh'

/** What a `read` route renders from: the request as checked so far, and the read models. */
export interface ReadContext {
  rid: string
  variant: Variant
  tls: boolean
  /** The request's Host header as sent (port included), or '' when absent. */
  host: string
  /** Present when the request carried a valid bearer token. */
  principal?: Principal
  params: Record<string, string>
  body?: unknown
  system: SystemState
  identity: IdentityState
  keystore: KeystoreState
  storage: StorageState
  upgrade: UpgradeState
  clock: Clock
  /** The chain the HTTPS listener serves; absent without one. */
  servedTls?: ServedTls
  readModel<S>(service: string): S | undefined
  /** The Prometheus exposition (`GET /metrics`); absent on a gateway started without metrics. */
  metrics?(): Promise<Exposition>
}

export type RouteHandler =
  | { kind: 'read'; render(ctx: ReadContext): CommandReply | Promise<CommandReply> }
  /** The caller's bearer token goes with the command: the service checks it itself. */
  | { kind: 'command'; service: string; op: string }
  /**
   * A body too large for one bus message: `op` answers `{size, data}` (the first chunk and the
   * whole length), then `chunk` answers `{data}` for `{offset, end}` until `size` bytes are sent.
   */
  | { kind: 'stream'; service: string; op: string; chunk: string }
  /**
   * An octet-stream body of up to 16 MiB, never held whole: `begin` answers `{upload}`, then
   * `upload_chunk` takes `{upload, offset, data}` and `upload_end` `{upload}` (gateway/upload.ts).
   */
  | { kind: 'upload'; service: string; begin: string; filenames: string[] }
  /** Answered by the gateway alone, from and on its own state (a DIAG fault of its listeners): no service asked. */
  | { kind: 'local'; answer(): CommandReply }

export interface Route {
  method: Method
  /** Literal segments and `:name` parameters, e.g. `/api/logger/:id`. */
  path: string
  variants: Variant[]
  auth: AuthMode
  /**
   * Any one of these satisfies the route. A token scope satisfies a required scope it equals or
   * extends by further `:` segments; a required scope ending in `<name>` (e.g. `keymgmt:use:<kid>`)
   * takes `name` from the path parameters or the body and must then match exactly.
   */
  scopes?: readonly string[]
  roles?: readonly Role[]
  tls: 'any' | 'required'
  /** JSON body schema; routes without one ignore any body sent. */
  body?: TSchema
  /**
   * `actor`: the body goes to the actor as received (`{raw}`), which parses and checks it itself
   * (the schema then only documents it). For login, whose every answer the brake must delay.
   */
  bodyCheck?: 'actor'
  /** A top-level JSON null counts as an absent field (crypto-contract §0: the SDKs send `"descr": null`). */
  nullIsAbsent?: true
  /**
   * For `auth: 'token'` routes: a request without an Authorization header may go without a token
   * when this says so of its body (key search by a `^` prefix while `allow_keysearch` is on).
   */
  anonymous?(body: Readonly<Record<string, unknown>> | undefined, identity: IdentityState): boolean
  /**
   * Refused with 409 while the device is in a fail state (fls_state ≠ 0), and before it is
   * personalised when it needs a token; an HTTPS-only (key) route refuses so before the scope check.
   */
  healthy?: true
  /**
   * The device's state is refused (409: a fail state, or no owner, whoever asks) before the token's absence, role and
   * scope are: the external authenticator's order (ext-auth contract §1.0), the key routes' without their 418.
   */
  unreadyFirst?: true
  /** Refused 403 while the device clock was never set: after a bad token's 401, before the state's 409. */
  needsClock?: true
  /** What the operation's 406 means, for a route outside the key operations (whose 406 the API description knows). */
  fails?: string
  /**
   * How long each command this route sends may take (protocol/deadlines.ts); `short` when absent.
   * A stream or upload route's class bounds each of its chunk commands, not the whole transfer.
   */
  deadline?: DeadlineClass
  /** A route of the DIAG build (hemd --diag) alone: its API description marks it so. */
  diag?: true
  /** Why the service may answer 429 with `Retry-After` (its queue for strangers is full): the OpenAPI text. */
  tooManyRequests?: string
  /**
   * The service shares out what strangers may queue (challenges, login attempts) between clients by their address:
   * the command carries it (CommandRequest.source). Read only for these routes, since reading it costs every request.
   */
  source?: true
  /** A 200 that is text, not JSON: its content type and what it is, for the API description. */
  text?: { contentType: string; description: string }
  /** The connection closes after the answer: what the route does ends it anyway (a restart). */
  closes?: true
  /**
   * A stop answers the command in flight 503 `stopping` at once rather than await it: its service answers it so at its
   * own stop (a waiting login attempt), and a client that gave up is not seen while its command runs.
   */
  refusedAtStop?: true
  handler: RouteHandler
}

export interface GatewayOptions {
  variant: Variant
  bus: GatewayBus
  clock: Clock
  tokens: TokenVerifier
  http?: { host: string; port: number }
  https?: { host: string; port: number; certFile: string; keyFile: string }
  logger: Logger
  /** Defaults to `routeTable`; tests inject their own. */
  routes?: readonly Route[]
  /** P: the installed management app, served at `/`. */
  webroot?: Pick<WebrootStore, 'current'>
  /** The family's cloud the management app calls (hemd --cloud): named in its CSP and its `/app-config.json`. */
  appCloud?: string
  /**
   * Called (and awaited) before a 403 for a wrong scope or role goes out, so it can be audited; `bearer` proves the
   * principal.
   */
  onScopeFailure?(route: Route, principal: Principal, rid: string, bearer: string): void | Promise<void>
  /** The DIAG build (hemd --diag): the `/api/diag/*` routes are served (docs/diag.md). */
  diag?: boolean
  /** What `GET /metrics` shows, and the meters of every request; without it /metrics answers 404. */
  metrics?: DeviceMetrics
}

/** The principal of a valid bearer token, or undefined; throws BusUnavailableError while that cannot be told. */
export interface TokenVerifier {
  verify(bearer: string): Principal | undefined | Promise<Principal | undefined>
}

export interface Gateway {
  httpPort?: number
  httpsPort?: number
  /** Stops listening, lets requests in flight finish, then drops idle connections. */
  close(): Promise<void>
}
