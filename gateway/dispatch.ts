import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import {
  authorized,
  type CommandReply,
  type CommandRequest,
  DEADLINE_MS,
  type Principal,
  TIMEOUT_ERROR,
  type TransportConfig,
} from '../protocol/index.js'
import { authenticate, bearerToken } from './authenticate.js'
import {
  BODY_LIMIT,
  drainable,
  dropBody,
  parseJsonObject,
  payloadTooLarge,
  readBody,
  tryParseJsonObject,
  validateBody,
  withoutNulls,
} from './body.js'
import { corsHeaders, deviceOrigin, originAllowed, preflightHeaders } from './cors.js'
import { BusTimeoutError, BusUnavailableError, HttpError } from './errors.js'
import { Exchange } from './exchange.js'
import { errorReply } from './reply-body.js'
import { APP_CONFIG_PATH, appConfigReply, staticHeaders } from './static-site.js'
import { preferredEncoding } from './accept-encoding.js'
import { AppFiles } from './app-files.js'
import { noneMatchHits } from './if-none-match.js'
import { forwardUpload, UploadBody, uploadLength, type UploadHead } from './upload.js'
import { Router, type RouteMatch } from './router.js'
import { deviceFailState, deviceView, type DeviceView } from './device-view.js'
import { routeTable } from './routes.js'
import { withDiagRoutes } from './diag-routes.js'
import type { ServedTls } from './served-tls.js'
import { TlsBreaker } from './tls-breaker.js'
import { TurnEnd } from './turn-end.js'
import type { GatewayOptions, Route } from './types.js'

interface SiteHead {
  acceptEncoding: string
  ifNoneMatch: string
}

/** What the request carried that later steps need; uWS's HttpRequest dies when the handler returns. */
interface RequestHead {
  tls: boolean
  host: string
  origin: string
  authorization: string
  /** A request for the app's files (no route): what its answer is chosen by. */
  site: SiteHead | undefined
  /**
   * The client's address as this socket sees it, for a route that passes it on (Route.source): the services use it
   * for fairness only (CommandRequest.source). Read while uWS's response is alive: it dies with the handler.
   */
  source: string | undefined
}

/**
 * The path of every request: body (bounded, timed) -> device state known -> CORS -> OPTIONS ->
 * route -> bearer, TLS, fail state, scope/role (audited) in the order `admit` gives -> body schema
 * -> read or command.
 */
export class Dispatcher {
  private readonly router: Router
  /** Each route's body schema, compiled at its first body: compiling them all was 15–50 ms of every boot. */
  private readonly schemas = new Map<Route, TypeCheck<TSchema>>()
  private readonly inflight = new Set<Exchange>()
  /**
   * Requests a stop answers 503 at once: those whose body has not all arrived (no command has acted on them), and
   * those of a route that says so (Route.refusedAtStop) while their command runs.
   */
  private readonly refusable = new Map<Exchange, () => void>()
  private readonly waiting: (() => void)[] = []
  /** The listeners' own address origins (listenerOrigins): the app reached by address, not by name. */
  private readonly ownOrigins = new Set<string>()
  /** The HTTPS listener's port, which the app served over plain HTTP links to (`/app-config.json`). */
  private httpsPort: number | undefined
  /** The DIAG build's TLS fault; undefined in a normal build. */
  private readonly tlsBreaker: TlsBreaker | undefined
  private readonly turnEnd = new TurnEnd()
  /** The app's headers, made once: a cloud that no CSP may name stops the gateway's start, not a page. */
  private readonly siteHeaders: [string, string][]
  private readonly appFiles: AppFiles

  constructor(
    private readonly options: GatewayOptions,
    /** The HTTPS listener's chain (`GET /api/system/tls`); none without one. */
    private readonly servedTls?: ServedTls,
  ) {
    this.siteHeaders = staticHeaders(options.appCloud)
    this.appFiles = new AppFiles(options.webroot)
    const tlsBreaker = options.diag ? new TlsBreaker(options.logger) : undefined
    this.tlsBreaker = tlsBreaker
    const table = options.routes ?? routeTable
    const routes = tlsBreaker ? withDiagRoutes(table, tlsBreaker) : table
    this.router = new Router(routes, options.variant)
  }

  private schemaOf(route: Route, body: TSchema): TypeCheck<TSchema> {
    let check = this.schemas.get(route)
    if (!check) this.schemas.set(route, (check = TypeCompiler.Compile(body)))
    return check
  }

  listeningAt(origins: string[], tls: boolean, port: number): void {
    for (const origin of origins) this.ownOrigins.add(origin)
    if (tls) this.httpsPort = port
  }

  /** `fronted`: the connection came through the DIAG front, whose PROXY header names the client. */
  handle(res: HttpResponse, req: HttpRequest, tls: boolean, fronted: boolean): void {
    // Before any answer can start: the client must see the connection die, as a broken TLS session would.
    if (tls && this.tlsBreaker?.drops()) {
      res.close()
      return
    }
    const { logger, clock } = this.options
    const exchange: Exchange = new Exchange(res, req.getCaseSensitiveMethod(), req.getUrl(), logger, clock, () =>
      this.settled(exchange),
    )
    this.inflight.add(exchange)
    const match = this.router.match(exchange.method, exchange.path)
    const head: RequestHead = {
      tls,
      host: req.getHeader('host'),
      origin: req.getHeader('origin'),
      authorization: req.getHeader('authorization'),
      source: match?.route.source ? clientAddress(res, fronted) : undefined,
      site: match
        ? undefined
        : { acceptEncoding: req.getHeader('accept-encoding'), ifNoneMatch: req.getHeader('if-none-match') },
    }
    const device = deviceView(this.options.bus)
    if (device) setTransportHeaders(exchange, head, device.identity.transport, this.ownOrigins)
    if (match?.route.handler.kind === 'upload') return this.upload(res, req, exchange, head, device, match)
    const contentLength = req.getHeader('content-length')
    const tooLarge = Number(contentLength) > BODY_LIMIT
    if (tooLarge && !drainable(contentLength, req.getHeader('transfer-encoding')))
      return exchange.fail(payloadTooLarge())

    const body = tooLarge
      ? dropBody(exchange.body).then(() => Promise.reject(payloadTooLarge()))
      : readBody(exchange.body, BODY_LIMIT)
    this.refusable.set(exchange, () => exchange.fail(stopping(), true))
    armDeadline(exchange, device)
    this.process(exchange, head, device, match, body).catch((error: unknown) =>
      exchange.fail(this.httpError(error, exchange.rid)),
    )
  }

  /**
   * Resolves once no request is in flight. A request still waiting for its body, or refused at a
   * stop, is answered 503 and closed: a client that stalls, or gave up unseen (its reads held, see
   * ConnectionReads), must not hold up a reboot until its deadline.
   */
  idle(): Promise<void> {
    for (const refuse of this.refusable.values()) refuse()
    this.refusable.clear()
    if (this.inflight.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  private settled(exchange: Exchange): void {
    this.inflight.delete(exchange)
    this.refusable.delete(exchange)
    if (this.inflight.size === 0) for (const resolve of this.waiting.splice(0)) resolve()
  }

  private async process(
    exchange: Exchange,
    head: RequestHead,
    device: DeviceView | undefined,
    match: RouteMatch | undefined,
    body: Promise<Buffer>,
  ): Promise<void> {
    const raw = await body
    // uWS parses a read whole, and closes the connection if a request follows this one in it (see
    // ConnectionReads): nothing runs for this one until that read is through, nor once it is closed.
    // A read from the projections changes nothing, so it need not wait: the device's hottest path. Nor
    // does a request of no route (an app's file).
    if (match && match.route.handler.kind !== 'read') {
      exchange.reads.hold()
      await this.turnEnd.next()
      if (!exchange.open) return
    }
    this.refusable.delete(exchange)
    exchange.clearDeadline()
    // The app's files are public and no page of another origin may read them (no CORS header names it): a
    // module script, fetched with its page's Origin, is served whatever that origin, e.g. of a device with no
    // hostname reached by a name. The API's own 404s still come after the origin's check.
    if (head.site && exchange.method !== 'OPTIONS' && !exchange.path.startsWith('/api/'))
      return this.site(exchange, head.site)
    const known = this.known(head, device)
    if (exchange.method === 'OPTIONS') {
      for (const [name, value] of preflightHeaders) exchange.setHeader(name, value)
      return exchange.send({ status: 204 })
    }
    if (!match) throw new HttpError(404, 'not_found', 'No such resource')
    const { route } = match
    const actorChecked = route.bodyCheck === 'actor'
    // An actor-checked body (a cipher request) is parsed once, by the actor: its KID is checked there,
    // against the token's scope, where the key is known.
    const parsed = route.body && !actorChecked ? tryParseJsonObject(raw) : undefined
    const principal = await this.admit(exchange, head, known, match, () => tryParseJsonObject(raw), parsed)
    // Malformed is refused only once the caller may ask at all (crypto-contract §0): parsed again for the reason.
    const object = route.body && !actorChecked ? (parsed ?? parseJsonObject(raw)) : undefined
    const json = object && route.nullIsAbsent ? withoutNulls(object) : object
    if (json && route.body) validateBody(json, this.schemaOf(route, route.body))
    const forwarded = actorChecked ? { raw: raw.toString('utf8') } : json

    if (route.handler.kind === 'stream')
      return this.stream(exchange, route.handler, match.params, caller(head, principal), head.tls, budgetOf(route))
    if (route.refusedAtStop) this.refusable.set(exchange, () => exchange.fail(stopping(), true))
    exchange.send(await this.run(match, exchange.rid, head, known, principal, forwarded), route.closes === true)
  }

  /**
   * Anything outside `/api/` is the management app's (P): each file compressed as the client accepts, revalidated by
   * its ETag (`no-cache`: a browser asks every load, and a 304 is all a reload moves).
   */
  private async site(exchange: Exchange, { acceptEncoding, ifNoneMatch }: SiteHead): Promise<void> {
    if (!this.options.webroot || (exchange.method !== 'GET' && exchange.method !== 'HEAD')) {
      throw new HttpError(404, 'not_found', 'No such resource')
    }
    for (const [name, value] of this.siteHeaders) exchange.setHeader(name, value)
    if (exchange.path === APP_CONFIG_PATH) {
      // Per device, and changed by its operator: never kept.
      exchange.setHeader('Cache-Control', 'no-store')
      return exchange.send(appConfigReply(this.options.appCloud, this.httpsPort))
    }
    const file = await this.appFiles.answer(exchange.path, preferredEncoding(acceptEncoding))
    exchange.setHeader('Cache-Control', 'no-cache')
    exchange.appendHeader('Vary', 'Accept-Encoding')
    exchange.setHeader('ETag', file.etag)
    if (noneMatchHits(ifNoneMatch, file.etag)) return exchange.send({ status: 304 })
    if (file.encoding !== 'identity') exchange.setHeader('Content-Encoding', file.encoding)
    exchange.send({ status: 200, body: file.body, contentType: file.contentType })
  }

  /**
   * `upload_fw` / `upload_ui`: every check of an ordinary request, then the headers, and only
   * then is the body read, chunk by chunk, into the service. A refusal before the whole body was
   * read waits for the rest of it, dropped (see `drainable`); else it closes the connection.
   */
  private upload(
    res: HttpResponse,
    req: HttpRequest,
    exchange: Exchange,
    head: RequestHead,
    device: DeviceView | undefined,
    match: RouteMatch,
  ): void {
    const uploadHead: UploadHead = {
      contentLength: req.getHeader('content-length'),
      contentType: req.getHeader('content-type'),
      disposition: req.getHeader('content-disposition'),
      transferEncoding: req.getHeader('transfer-encoding'),
    }
    const body = new UploadBody(exchange.body, exchange.reads)
    exchange.onAbort(() => body.abandon())
    // dosprot bounds an upload too: a stalled one would hold its kind's pipeline (409 for every other).
    armDeadline(exchange, device, () => body.abandon())
    this.refusable.set(exchange, () => {
      body.abandon()
      exchange.fail(stopping(), true)
    })
    const handler = match.route.handler as Extract<Route['handler'], { kind: 'upload' }>
    const drain = drainable(uploadHead.contentLength, uploadHead.transferEncoding)
    const refuse = async (reply: CommandReply) => {
      if (drain) await body.dropRest()
      exchange.send(reply, drain ? false : 'linger')
    }
    const run = async () => {
      const principal = await this.admit(exchange, head, this.known(head, device), match, () => undefined, undefined)
      const length = uploadLength(uploadHead, handler)
      const base: CommandRequest = {
        rid: exchange.rid,
        tls: head.tls,
        params: match.params,
        ...caller(head, principal),
      }
      const budget = budgetOf(match.route)
      const { reply, complete } = await forwardUpload(this.options.bus, handler, base, length, body, budget)
      if (!reply) return
      if (complete) exchange.send(reply)
      else await refuse(reply)
    }
    run().catch((error: unknown) => refuse(errorReply(this.httpError(error, exchange.rid))))
  }

  /** Without the read models the transport rules (CORS above all) are unknown: fail closed. */
  private known(head: RequestHead, device: DeviceView | undefined): DeviceView {
    if (!device) throw new HttpError(503, 'bus_unavailable', 'The device state is not available yet; try again')
    if (head.origin !== '' && !requestOriginAllowed(head, device.identity.transport, this.ownOrigins)) {
      throw new HttpError(412, 'origin_not_allowed', 'The request origin is not allowed')
    }
    return device
  }

  /**
   * Who may go on, first refusal wins. The key and crypto routes (the HTTPS-only ones) take
   * crypto-contract §0's order: a bad token 401, plain HTTP 418, the device's state 409 (before
   * the scope: status shows it to anyone), no token 401, scope or role 403 (audited); the
   * external authenticator's (`unreadyFirst`) the same without the 418, with the clock's 403
   * (`needsClock`) before the state. The other `healthy` routes keep the seed's: a wrong scope is
   * refused, and journaled, in any state.
   */
  private async admit(
    exchange: Exchange,
    head: RequestHead,
    device: DeviceView,
    { route, params }: RouteMatch,
    /** Parsed only for a route that may be anonymous, asked without a token. */
    anonymousBody: () => Record<string, unknown> | undefined,
    json: Record<string, unknown> | undefined,
  ): Promise<Principal | undefined> {
    const principal = await authenticate(head.authorization, this.options.tokens)
    const keyRoute = route.tls === 'required'
    if (keyRoute && !head.tls) throw new HttpError(418, 'tls_required', 'This resource is served over HTTPS only')
    if (route.needsClock && !this.options.clock.isSet())
      throw new HttpError(403, 'clock_not_set', 'The device clock is not set: run a check-in first')
    const stateFirst = keyRoute || route.unreadyFirst === true
    if (stateFirst) refuseUnready(route, device)
    if (!principal) {
      const anonymous = route.anonymous?.(anonymousBody(), device.identity) === true
      if ((route.auth === 'token' && !anonymous) || (route.auth === 'token-unless-fresh' && device.identity.inited))
        throw new HttpError(401, 'token_required', 'This request needs a bearer token')
    } else if (!authorized(route, principal, { ...json, ...params }, route.bodyCheck === 'actor')) {
      await this.options.onScopeFailure?.(route, principal, exchange.rid, bearerToken(head.authorization)!)
      throw new HttpError(403, 'forbidden', 'The token scope or role does not permit this request')
    }
    if (!stateFirst) refuseUnready(route, device)
    return principal
  }

  private async stream(
    exchange: Exchange,
    handler: Extract<Route['handler'], { kind: 'stream' }>,
    params: Record<string, string>,
    bearer: { bearer?: string },
    tls: boolean,
    /** Each command's (the first and every chunk's) deadline budget. */
    budget: number,
  ): Promise<void> {
    const { bus } = this.options
    const base: CommandRequest = { rid: exchange.rid, tls, params, ...bearer }
    const first = await bus.request(handler.service, handler.op, base, budget)
    if (first.status !== 200) return exchange.send(first)
    const { size, data, filename } = first.body as { size: number; data: Uint8Array; filename?: unknown }
    // A download to keep (a backup): the service names the file, in characters that need no quoting.
    if (typeof filename === 'string' && /^[\w.-]{1,128}$/.test(filename))
      exchange.setHeader('Content-Disposition', `attachment; filename="${filename}"`)
    await exchange.stream(first.status, first.contentType ?? 'application/octet-stream', size, data, async (offset) => {
      const reply = await bus.request(handler.service, handler.chunk, { ...base, body: { offset, end: size } }, budget)
      if (reply.status !== 200) throw new Error(`${handler.service}.${handler.chunk} answered ${reply.status}`)
      return (reply.body as { data: Uint8Array }).data
    })
  }

  private async run(
    { route, params }: RouteMatch,
    rid: string,
    head: RequestHead,
    device: DeviceView,
    principal: Principal | undefined,
    body: Record<string, unknown> | undefined,
  ): Promise<CommandReply> {
    const { handler } = route
    const { bus, variant, clock } = this.options
    if (handler.kind === 'read') {
      return handler.render({
        rid,
        variant,
        tls: head.tls,
        host: head.host,
        principal,
        params,
        body,
        ...device,
        clock,
        ...(this.servedTls ? { servedTls: this.servedTls } : {}),
        readModel: (service) => bus.readModel(service),
      })
    }
    if (handler.kind === 'local') return handler.answer()
    if (handler.kind !== 'command') throw new Error(`a ${handler.kind} route is not run as a command`)
    const request: CommandRequest = {
      rid,
      tls: head.tls,
      params,
      ...caller(head, principal),
      ...(body ? { body } : {}),
      ...(head.source !== undefined ? { source: head.source } : {}),
    }
    return bus.request(handler.service, handler.op, request, budgetOf(route))
  }

  private httpError(error: unknown, rid: string): HttpError {
    if (error instanceof HttpError) return error
    if (error instanceof BusUnavailableError) {
      return new HttpError(503, 'bus_unavailable', 'A device service is not reachable; try again')
    }
    // The service has the command and may still finish it: a 503 would invite a retry that runs it twice.
    if (error instanceof BusTimeoutError) return new HttpError(504, TIMEOUT_ERROR.error, TIMEOUT_ERROR.message)
    this.options.logger.error({ rid, err: error }, 'request failed')
    return new HttpError(500, 'internal_error', 'The request could not be completed')
  }
}

function clientAddress(res: HttpResponse, fronted: boolean): string {
  const address = fronted ? res.getProxiedRemoteAddressAsText() : res.getRemoteAddressAsText()
  return Buffer.from(address).toString('latin1')
}

/**
 * Who the command is for, as the service behind it will check: the bearer token the gateway
 * admitted, never a principal (a service takes no process's word for who is asking).
 */
function caller(head: RequestHead, principal: Principal | undefined): { bearer?: string } {
  const bearer = principal ? bearerToken(head.authorization) : undefined
  return bearer ? { bearer } : {}
}

/** How long each command of the route may take. */
function budgetOf(route: Route): number {
  return DEADLINE_MS[route.deadline ?? 'short']
}

/**
 * The 409 of a `healthy` route the device cannot serve now: in a fail state, or, for a route
 * that needs an owner's token, before there is an owner (the key store could not serve it either).
 */
function refuseUnready(route: Route, device: DeviceView): void {
  if (!route.healthy) return
  if (deviceFailState(device) !== 0)
    throw new HttpError(409, 'device_fault', 'The device is in a fail state (see fls_state in status)')
  if ((route.auth === 'token' || route.unreadyFirst) && !device.identity.inited)
    throw new HttpError(409, 'not_personalised', 'The device is not personalised')
}

/** `http_option_dosprot_mode` N > 0: a request not received within N × 500 ms of the device's time is cut (408). */
function armDeadline(exchange: Exchange, device: DeviceView | undefined, expiring?: () => void): void {
  const dosprot = device?.identity.transport.dosprot ?? 0
  if (dosprot > 0) exchange.setDeadline(dosprot * 500, expiring)
}

function stopping(): HttpError {
  return new HttpError(503, 'stopping', 'The device is restarting or stopping; try again')
}

/** Set before the body is read, so that even an early 408 or 413 carries them. */
function setTransportHeaders(
  exchange: Exchange,
  head: RequestHead,
  transport: TransportConfig,
  ownOrigins: ReadonlySet<string>,
): void {
  if (head.tls && transport.hsts) exchange.setHeader('Strict-Transport-Security', 'max-age=31536000')
  if (head.origin !== '' && requestOriginAllowed(head, transport, ownOrigins)) {
    for (const [name, value] of corsHeaders(head.origin)) exchange.setHeader(name, value)
  }
}

/**
 * The configured `origin`, and always the device's own at its configured hostname or at an address
 * it listens on: the management app it serves at `/` sends its own Origin with every POST.
 */
function requestOriginAllowed(head: RequestHead, transport: TransportConfig, ownOrigins: ReadonlySet<string>): boolean {
  return (
    deviceOrigin(head.origin, transport.hostname, head.tls) ||
    ownOrigins.has(head.origin.toLowerCase()) ||
    originAllowed(transport.origin, head.origin)
  )
}
