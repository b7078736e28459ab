import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { Logger } from 'pino'
import { RateLimiter } from './rate-limiter.js'
import { requestDeadline, StateUnavailableError, STATE_TRY_MS } from './resilient-kv.js'
import { RouteTable } from './route-table.js'
import type { CloudReply, CloudRequest, CloudRoute } from './types.js'

export interface CloudFrontOptions {
  host: string
  /** 0: a port the kernel picks. */
  port: number
  /** PEM certificate chain and key: HTTPS, TLS 1.3 only. Without: plain HTTP. */
  tls?: { cert: string; key: string }
  /** Milliseconds since the epoch: the cloud's clock, which tests set. */
  clock: () => number
  logger: Logger
  limits?: Partial<FrontLimits>
}

export interface FrontLimits {
  bodyBytes: number
  /** Requests a second per client address, on average, and at once. */
  rate: number
  burst: number
  /** A handler that has not answered by then gets a 503. */
  handlerMs: number
}

/** The contract's numbers (ext-auth contract §3.0). */
export const FRONT_LIMITS: FrontLimits = { bodyBytes: 16 * 1024, rate: 20, burst: 100, handlerMs: 10_000 }

export interface CloudFront {
  /** http(s)://host:port */
  url: string
  port: number
  /** Serves `routes` from now on: the routes may need the front's URL, known only once it listens. */
  mount(routes: readonly CloudRoute[]): void
  close(): Promise<void>
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
}

/** Why a request is answered by the front itself, before any handler. */
class FrontRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

/**
 * The cloud's HTTP(S) front (ext-auth contract §3.0): routes, CORS on every answer, JSON with
 * Content-Type and Content-Length spelled exactly so (never chunked), a body limit, a rate limit
 * per client address and a deadline per request.
 */
export async function startCloudFront(o: CloudFrontOptions): Promise<CloudFront> {
  const limits = { ...FRONT_LIMITS, ...o.limits }
  // Undefined until mounted: the front listens first (the routes need its URL), and a request in between is told
  // to come back, as a lost quorum tells it, not that no such route exists.
  let table: RouteTable | undefined
  const limiter = new RateLimiter(limits.rate, limits.burst)
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    serve(req, res, { table, limiter, limits, clock: o.clock, logger: o.logger }).catch((err: unknown) => {
      o.logger.error({ err }, 'request failed')
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'The cloud failed' })
    })
  }
  const server: Server = o.tls
    ? createHttpsServer({ cert: o.tls.cert, key: o.tls.key, minVersion: 'TLSv1.3' }, handle)
    : createHttpServer(handle)
  server.requestTimeout = limits.handlerMs + 5_000
  server.headersTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const host = o.host.includes(':') ? `[${o.host}]` : o.host
  return {
    url: `${o.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    mount(routes) {
      table = new RouteTable(routes)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

interface Serving {
  table: RouteTable | undefined
  limiter: RateLimiter
  limits: FrontLimits
  clock: () => number
  logger: Logger
}

async function serve(req: IncomingMessage, res: ServerResponse, s: Serving): Promise<void> {
  const nowMs = s.clock()
  const ip = clientAddress(req)
  let reply: CloudReply
  try {
    reply = await answer(req, ip, nowMs, s)
  } catch (err) {
    const refusal = err instanceof StateUnavailableError ? unavailable(err, s.logger) : err
    if (!(refusal instanceof FrontRefusal)) throw refusal
    reply = {
      status: refusal.status,
      body: { error: refusal.code, message: refusal.message },
      headers: refusal.headers,
    }
  }
  if (reply.body instanceof Uint8Array) sendBytes(res, reply.status, reply.body, reply.headers ?? {})
  else send(res, reply.status, reply.body, reply.headers)
}

async function answer(req: IncomingMessage, ip: string, nowMs: number, s: Serving): Promise<CloudReply> {
  const wait = s.limiter.take(ip, nowMs)
  if (wait > 0) {
    throw new FrontRefusal(429, 'too_many_requests', 'Too many requests from this address', {
      'Retry-After': String(wait),
    })
  }
  const path = (req.url ?? '/').split('?')[0]!
  if (req.method === 'OPTIONS') return { status: 204, body: undefined }
  if (!s.table) throw new FrontRefusal(503, 'unavailable', 'The cloud is starting; try again', { 'Retry-After': '1' })
  // HEAD is GET without the body (send leaves it out): what a browser or a cache checks a page's file with.
  const match = s.table.match(req.method === 'HEAD' ? 'GET' : (req.method ?? ''), path)
  if (match.kind === 'none') throw new FrontRefusal(404, 'not_found', 'No such route')
  if (match.kind === 'wrong_method') {
    const allowed = match.allowed.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]))
    throw new FrontRefusal(405, 'method_not_allowed', `Use ${allowed.join(', ')}`, {
      Allow: [...allowed, 'OPTIONS'].join(', '),
    })
  }
  const body = parseJson(await readBody(req, s.limits.bodyBytes))
  const request: CloudRequest = {
    method: match.route.method,
    path,
    params: match.params,
    body,
    ip,
    now: Math.floor(nowMs / 1000),
  }
  // The pattern, never the path: a path may hold an operator's auth key.
  s.logger.debug({ route: `${request.method} ${match.route.pattern}`, ip }, 'request')
  // The state's retries stop a try and a margin before the deadline: the answer is then the cloud's 503 unavailable.
  const retriesEnd = Date.now() + s.limits.handlerMs - STATE_TRY_MS - 500
  return withDeadline(
    requestDeadline.run(retriesEnd, () => match.route.handler(request)),
    s.limits.handlerMs,
  )
}

/** The state did not answer in time (a node lost, a leader being elected): the client tries again later. */
function unavailable(err: StateUnavailableError, logger: Logger): FrontRefusal {
  logger.warn({ err }, 'the state did not answer: 503')
  return new FrontRefusal(503, 'unavailable', 'The cloud cannot reach its state now; try again', { 'Retry-After': '1' })
}

function clientAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown'
  return address.startsWith('::ffff:') ? address.slice(7) : address
}

/** The body, refused with 413 as soon as it is known to be too large: by its Content-Length, or while it arrives. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new FrontRefusal(413, 'payload_too_large', `The body is limited to ${limit} bytes`)
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw tooLarge()
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

function parseJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown
  } catch {
    throw new FrontRefusal(400, 'malformed_json', 'The body is not JSON')
  }
}

async function withDeadline(reply: Promise<CloudReply>, ms: number): Promise<CloudReply> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new FrontRefusal(503, 'timeout', 'The cloud did not answer in time')), ms)
  })
  try {
    return await Promise.race([reply, late])
  } finally {
    clearTimeout(timer)
  }
}

/** JSON with Content-Type and Content-Length spelled exactly so (PHP clients read the body only then). */
function send(res: ServerResponse, status: number, body: unknown, extra: Readonly<Record<string, string>> = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body)
  const headers: Record<string, string> = { ...CORS, ...extra }
  if (text !== '') headers['Content-Type'] = 'application/json'
  headers['Content-Length'] = String(Buffer.byteLength(text))
  // A body left unread (413, refused early) is not read to find the next request: the connection closes.
  const req = res.req
  if (!req.readableEnded && (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding']))
    headers.Connection = 'close'
  res.writeHead(status, headers)
  res.end(res.req.method === 'HEAD' ? undefined : text)
}

/** A file as it is, with the headers its route gives (the page's own, no CORS): a page is not an API. */
function sendBytes(
  res: ServerResponse,
  status: number,
  body: Uint8Array,
  extra: Readonly<Record<string, string>>,
): void {
  res.writeHead(status, { ...extra, 'Content-Length': String(body.length) })
  res.end(res.req.method === 'HEAD' ? undefined : body)
}
