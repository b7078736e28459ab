import { hostClock } from '../hal/sim/host-clock.js'
import { Type } from '@sinclair/typebox'
import crypto from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import net from 'node:net'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import tls from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import pino from 'pino'
import t, { type Test } from 'tap'
import type { CommandReply, CommandRequest, Principal } from '../protocol/bus-messages.js'
import type { KeystoreState } from '../protocol/keystore-state.js'
import type { StorageState } from '../protocol/storage-state.js'
import type { UpgradeState } from '../protocol/upgrade-state.js'
import type { IdentityState, TransportConfig } from '../protocol/identity-state.js'
import type { SystemState } from '../protocol/system-state.js'
import {
  BusTimeoutError,
  BusUnavailableError,
  ListenError,
  routeTable,
  startGateway,
  type Gateway,
  type GatewayBus,
  type Route,
} from '../gateway/index.js'
import type { Clock } from '../hal/types.js'
import type { Variant } from '../protocol/device.js'
import { connect, type Msg } from '@nats-io/transport-node'
import { ReadModelBus } from '../bus/read-model-bus.js'
import { decode, encode } from '../protocol/codec.js'
import { DEADLINE_MS } from '../protocol/deadlines.js'
import { Subjects } from '../protocol/subjects.js'
import { silentLogger } from './helpers/logger.js'
import { call } from './helpers/http.js'
import { rawExchange } from './helpers/raw-http.js'
import { proxyHeader } from '../gateway/proxy-header.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'
import { startNats } from './helpers/nats.js'
import { HeldTimers } from './helpers/held-timers.js'
import { until } from './helpers/until.js'

// ---- fixtures ----------------------------------------------------------------------------

const certDir = t.testdir()
const certFile = join(certDir, 'cert.pem')
const keyFile = join(certDir, 'key.pem')
writeSelfSignedCert('hem.local', certFile, keyFile)

const NOW = Date.UTC(2026, 10, 22, 0, 37, 13, 456)
const KID = '0123456789abcdef0123456789abcdef'
/** The firmware and boot loader versions, keys and signatures the fake system read model reports. */
const FIRMWARE = {
  fwv: '1.2.3',
  fwk: 'ZndrLWtleQ==',
  fws: 'ZndzLXNpZw==',
  blv: '0.9.0',
  blk: 'YmxrLWtleQ==',
  bls: 'YmxzLXNpZw==',
}

class FakeBus implements GatewayBus {
  readonly models = new Map<string, unknown>()
  readonly requests: { service: string; op: string; req: CommandRequest; budgetMs: number | undefined }[] = []
  reply: (req: CommandRequest, sent: { service: string; op: string; budgetMs?: number }) => Promise<CommandReply> =
    async (req) => ({ status: 200, body: { echo: req.body ?? null } })

  readModel<S>(service: string): S | undefined {
    return this.models.get(service) as S | undefined
  }

  request(service: string, op: string, req: CommandRequest, budgetMs?: number): Promise<CommandReply> {
    this.requests.push({ service, op, req, budgetMs })
    return this.reply(req, { service, op, ...(budgetMs !== undefined ? { budgetMs } : {}) })
  }
}

interface DeviceModels {
  system: SystemState
  identity: IdentityState
  keystore: KeystoreState
  storage: StorageState
  upgrade: UpgradeState
}

type StatusPatch = Partial<SystemState['status']> & { fw_upgrade?: boolean } & Partial<
    Pick<IdentityState, 'ctx' | 'inited' | 'format' | 'trusted_ts' | 'intact'>
  >

/** The two read models the gateway renders from; `status` patches fields of either. */
function systemState(
  variant: Variant,
  patch: { status?: StatusPatch; transport?: Partial<TransportConfig> } = {},
): DeviceModels {
  const { ctx = 7, inited = true, format, trusted_ts = true, intact = true, fw_upgrade, ...health } = patch.status ?? {}
  return {
    system: {
      variant,
      bootedAt: 1_000,
      version: {
        hwv: variant === 'P' ? 'PPA-1.0' : 'EPA-1.0',
        ...FIRMWARE,
        sd_csd: '400e00325b5900003b377f800a404000',
        sd_cid: '035344534433324780ffffffff0111a2',
      },
      status: { fls_state: 0, temp: 41, ...health },
    },
    identity: {
      token_key: 'test-key',
      ctx,
      inited,
      ...(format !== undefined ? { format } : {}),
      trusted_ts,
      allow_keysearch: false,
      intact,
      transport: {
        hostname: 'hem.local',
        origin: 'https://app.example.com',
        hsts: false,
        dosprot: 0,
        ...patch.transport,
      },
    },
    keystore: {
      fls: 0,
      engine: 'native',
      repo_stats: { total: 3, deleted: 1, invalid: 0, freeespace: 1021, fragmentation: 33 },
    },
    storage: variant === 'P' ? { storage: ['1000:rw', '2000:-'] } : {},
    upgrade: {
      fw: 'idle',
      ui: 'idle',
      ...(variant === 'P' ? { uis: 'dWktaGFzaA==' } : {}),
      ...(fw_upgrade ? { fw_upgrade: true } : {}),
    },
  }
}

const tokens = new Map<string, Principal>([
  ['user-config', { sub: 'U', scope: 'system:config' }],
  ['user-disk0rw', { sub: 'U', scope: 'storage:disk0:rw' }],
  ['user-disk0', { sub: 'U', scope: 'storage:disk0' }],
  ['user-kid', { sub: 'U', scope: `keymgmt:use:${KID}` }],
  ['master-kid', { sub: 'M', scope: `keymgmt:use:${KID}` }],
  ['user-gen', { sub: 'U', scope: 'keymgmt:gen' }],
  ['master-gen', { sub: 'M', scope: 'keymgmt:gen' }],
])

/** An open route of both variants over HTTP or HTTPS to the `test` service, unless `extra` says otherwise. */
function testRoute(method: Route['method'], path: string, op: string, extra: Partial<Route> = {}): Route {
  return {
    method,
    path,
    variants: ['P', 'E'],
    auth: 'open',
    tls: 'any',
    handler: { kind: 'command', service: 'test', op },
    ...extra,
  }
}

/** Routes that real features add later, so the table-driven checks can be exercised now. */
const testRoutes: Route[] = [
  ...routeTable,
  testRoute('GET', '/api/test/p-only', 'p', { variants: ['P'] }),
  testRoute('GET', '/api/test/fair', 'fair', { source: true }),
  testRoute('POST', '/api/test/echo', 'echo', { body: Type.Object({ n: Type.Optional(Type.Number()) }) }),
  testRoute('GET', '/api/test/secure', 'secure', { tls: 'required' }),
  testRoute('GET', '/api/test/disk0', 'disk0', { variants: ['P'], auth: 'token', scopes: ['storage:disk0'] }),
  testRoute('GET', '/api/test/disk0rw', 'disk0rw', { variants: ['P'], auth: 'token', scopes: ['storage:disk0:rw'] }),
  testRoute('POST', '/api/test/cipher', 'cipher', {
    auth: 'token',
    scopes: ['keymgmt:use:<kid>'],
    roles: ['U', 'ExtAuth'],
    body: Type.Object({ kid: Type.String({ pattern: '^[0-9a-fA-F]{32}$' }) }),
  }),
  testRoute('GET', '/api/test/key/:kid', 'key', { auth: 'token', scopes: ['keymgmt:get', 'keymgmt:use:<kid>'] }),
  testRoute('GET', '/api/test/fresh', 'fresh', { auth: 'token-unless-fresh' }),
  // As the key routes, storage and attestation are: fail-state gated, HTTPS only for keys.
  testRoute('POST', '/api/test/keys', 'keys', {
    auth: 'token',
    scopes: ['keymgmt:gen'],
    roles: ['U', 'ExtAuth'],
    tls: 'required',
    healthy: true,
    body: Type.Object({ label: Type.String() }),
  }),
  testRoute('GET', '/api/test/disk', 'disk', {
    auth: 'token',
    scopes: ['storage'],
    roles: ['U', 'ExtAuth'],
    healthy: true,
  }),
  testRoute('GET', '/api/test/attest', 'attest', { auth: 'token-unless-fresh', healthy: true }),
]

interface Setup {
  variant?: Variant
  state?: DeviceModels | null
  clockSet?: boolean
  routes?: Route[]
  /** The DIAG build: the listeners behind the front (gateway/diag-front.ts). */
  diag?: boolean
}

interface Started {
  gw: Gateway
  bus: FakeBus
  http: number
  https: number
  scopeFailures: { path: string; principal: Principal; rid: string; bearer: string }[]
  logs: Record<string, unknown>[]
  /** The gateway clock's timers (the requests' deadlines): they fire only when the test advances them. */
  timers: HeldTimers
}

async function start(t: Test, setup: Setup = {}): Promise<Started> {
  const variant = setup.variant ?? 'P'
  const bus = new FakeBus()
  if (setup.state !== null) {
    const models = setup.state ?? systemState(variant)
    bus.models.set('system', models.system)
    bus.models.set('auth', models.identity)
    bus.models.set('keystore', models.keystore)
    bus.models.set('storage', models.storage)
    bus.models.set('upgrade', models.upgrade)
  }
  // The clock stands still, so that every answer shows the same times.
  const timers = new HeldTimers(() => undefined)
  const clock: Clock = {
    now: () => NOW,
    monotonic: () => 62_999,
    isSet: () => setup.clockSet ?? true,
    sleep: hostClock.sleep,
    timer: timers.timer,
  }
  const logs: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const scopeFailures: Started['scopeFailures'] = []
  const gw = await startGateway({
    variant,
    bus,
    clock,
    tokens: { verify: async (bearer) => tokens.get(bearer) },
    http: { host: '127.0.0.1', port: 0 },
    https: { host: '127.0.0.1', port: 0, certFile, keyFile },
    logger: pino({ level: 'debug' }, sink),
    routes: setup.routes ?? testRoutes,
    ...(setup.diag ? { diag: true } : {}),
    onScopeFailure: (route, principal, rid, bearer) =>
      void scopeFailures.push({ path: route.path, principal, rid, bearer }),
  })
  t.teardown(() => gw.close())
  return { gw, bus, http: gw.httpPort!, https: gw.httpsPort!, scopeFailures, logs, timers }
}

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  rawHeaders: string[]
  text: string
  json: any
}

interface Ask {
  method?: string
  path: string
  headers?: Record<string, string | number>
  body?: string | Buffer
  tls?: boolean
}

function ask(port: number, { method = 'GET', path, headers = {}, body, tls = false }: Ask): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = tls ? httpsRequest : httpRequest
    const req = send(
      { host: '127.0.0.1', port, method, path, headers, agent: false, rejectUnauthorized: false },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, text, json })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** A raw connection, for exact bytes on the wire and for several requests on one socket. */
class RawClient {
  private data = Buffer.alloc(0)
  private waiter: (() => void) | undefined
  ended = false
  readonly closed: Promise<void>

  constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.data = Buffer.concat([this.data, d])
      this.waiter?.()
    })
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.ended = true
        this.waiter?.()
        resolve()
      }),
    )
    socket.on('error', () => {})
  }

  static connect(port: number, secure = false): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = secure
        ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(new RawClient(socket)))
        : net.connect(port, '127.0.0.1', () => resolve(new RawClient(socket)))
      socket.once('error', reject)
    })
  }

  write(text: string | Buffer): void {
    this.socket.write(text)
  }

  /** The next response's head (status line and headers), as soon as it is in, whatever follows. */
  async head(): Promise<string> {
    for (;;) {
      const end = this.data.indexOf('\r\n\r\n')
      if (end !== -1) return this.data.subarray(0, end).toString()
      if (this.ended) throw new Error(`connection closed; got ${JSON.stringify(this.data.toString())}`)
      await new Promise<void>((resolve) => (this.waiter = resolve))
      this.waiter = undefined
    }
  }

  /** The next whole response: head (status line and headers, as sent) and body (by Content-Length). */
  async response(): Promise<{ head: string; body: string }> {
    for (;;) {
      const end = this.data.indexOf('\r\n\r\n')
      if (end !== -1) {
        const head = this.data.subarray(0, end).toString()
        const length = Number(/\r\nContent-Length: (\d+)/.exec(head)?.[1] ?? 0)
        if (this.data.length >= end + 4 + length) {
          const body = this.data.subarray(end + 4, end + 4 + length).toString()
          this.data = this.data.subarray(end + 4 + length)
          return { head, body }
        }
      }
      if (this.ended) throw new Error(`connection closed; got ${JSON.stringify(this.data.toString())}`)
      await new Promise<void>((resolve) => (this.waiter = resolve))
    }
  }

  /** Everything received and not yet consumed. */
  take(): string {
    const text = this.data.toString()
    this.data = Buffer.alloc(0)
    return text
  }

  close(): void {
    this.socket.destroy()
  }
}

function get(path: string, headers: Record<string, string> = {}): string {
  const lines = Object.entries({ Host: 'hem.local', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`)
  return `GET ${path} HTTP/1.1\r\n${lines.join('')}\r\n`
}

function headerValue(a: Answer, name: string): string | undefined {
  const i = a.rawHeaders.indexOf(name)
  return i === -1 ? undefined : a.rawHeaders[i + 1]
}

// ---- version -------------------------------------------------------------------------------

t.test('version on P, over HTTP and HTTPS, with and without a token', async (t) => {
  const { http, https } = await start(t)
  const base = {
    hwv: 'PPA-1.0',
    ...FIRMWARE,
    uis: 'dWktaGFzaA==',
  }
  for (const port of [http, https]) {
    const open = await ask(port, { path: '/api/system/version', tls: port === https })
    t.equal(open.status, 200)
    t.strictSame(open.json, base, 'no sd_* without a token')
    const withToken = await ask(port, {
      path: '/api/system/version',
      tls: port === https,
      headers: { Authorization: 'Bearer user-config' },
    })
    t.strictSame(withToken.json, {
      ...base,
      sd_csd: '400e00325b5900003b377f800a404000',
      sd_cid: '035344534433324780ffffffff0111a2',
    })
  }
})

t.test('version on E never shows sd_*; uis only when present', async (t) => {
  const state = systemState('E')
  const { http, https } = await start(t, { variant: 'E', state })
  for (const port of [http, https]) {
    const a = await ask(port, {
      path: '/api/system/version',
      tls: port === https,
      headers: { Authorization: 'Bearer user-config' },
    })
    t.equal(a.status, 200)
    t.same(Object.keys(a.json), ['hwv', 'fwv', 'fwk', 'fws', 'blv', 'blk', 'bls'])
    t.match(a.json.hwv, /EPA/)
  }
})

// ---- status --------------------------------------------------------------------------------

t.test('status on P over HTTP: keys in order, https, hostname, storage', async (t) => {
  const { http } = await start(t)
  const a = await ask(http, { path: '/api/system/status' })
  t.equal(a.status, 200)
  t.strictSame(a.json, {
    ctx: 7,
    fls_state: 0,
    uptime: 61,
    temp: 41,
    ts: '2026-11-22T00:37:13Z',
    time: Math.floor(NOW / 1000),
    https: true,
    hostname: 'hem.local',
    storage: ['1000:rw', '2000:-'],
  })
  t.same(Object.keys(a.json), ['ctx', 'fls_state', 'uptime', 'temp', 'ts', 'time', 'https', 'hostname', 'storage'])
})

t.test('status over HTTPS has no https key; HSTS only over HTTPS and only when enabled', async (t) => {
  for (const hsts of [false, true]) {
    const { http, https } = await start(t, { state: systemState('P', { transport: { hsts } }) })
    const secure = await ask(https, { path: '/api/system/status', tls: true, headers: { Host: 'hem.local:8443' } })
    t.equal(secure.status, 200)
    t.notOk('https' in secure.json)
    t.notOk('hostname' in secure.json)
    t.equal(headerValue(secure, 'Strict-Transport-Security'), hsts ? 'max-age=31536000' : undefined)
    const plain = await ask(http, { path: '/api/system/status' })
    t.equal(plain.json.https, true)
    t.equal(headerValue(plain, 'Strict-Transport-Security'), undefined)
  }
})

t.test('TLS 1.3 works', async (t) => {
  const { https } = await start(t)
  const c = await RawClient.connect(https, true)
  t.equal((c.socket as tls.TLSSocket).getProtocol(), 'TLSv1.3')
  c.write(get('/api/system/status', { Connection: 'close' }))
  const r = await c.response()
  t.match(r.head, /^HTTP\/1\.1 200 OK\r\n/)
  c.close()
})

t.test('status on E: no storage', async (t) => {
  const { http, https } = await start(t, { variant: 'E' })
  for (const port of [http, https]) {
    const a = await ask(port, { path: '/api/system/status', tls: port === https })
    t.equal(a.status, 200)
    t.notOk('storage' in a.json)
  }
})

t.test('status shows a new read model in the very next answer', async (t) => {
  const { http, bus } = await start(t)
  const before = await ask(http, { path: '/api/system/status' })
  t.equal(before.json.fls_state, 0)
  const system = systemState('P', { status: { fls_state: 0x04 } }).system
  bus.models.set('system', system)
  t.equal((await ask(http, { path: '/api/system/status' })).json.fls_state, 0x04)
  bus.models.set('upgrade', systemState('P', { status: { fw_upgrade: true } }).upgrade)
  t.equal((await ask(http, { path: '/api/system/status' })).json.fw_upgrade, true)
  const after = await ask(http, { path: '/api/system/status' })
  t.strictSame(after.json, { ...before.json, fls_state: 0x04, fw_upgrade: true }, 'nothing else changed')
})

t.test('hostname appears only when the Host header (port ignored) differs', async (t) => {
  const { http } = await start(t)
  const cases: [string, boolean][] = [
    ['hem.local', false],
    ['hem.local:8080', false],
    ['HEM.local:80', false],
    ['other.local', true],
    ['other.local:8080', true],
    ['127.0.0.1:80', true],
  ]
  for (const [host, shown] of cases) {
    const a = await ask(http, { path: '/api/system/status', headers: { Host: host } })
    t.equal(a.json.hostname, shown ? 'hem.local' : undefined, host)
  }
  const unnamed = await start(t, { state: systemState('P', { transport: { hostname: '' } }) })
  t.notOk('hostname' in (await ask(unnamed.http, { path: '/api/system/status' })).json, 'no hostname configured yet')
})

t.test('inited, format, fw_upgrade and tts appear only in their cases, in order', async (t) => {
  const state = systemState('P', { status: { inited: false, format: 'status2', fw_upgrade: true, trusted_ts: false } })
  const { http } = await start(t, { state })
  const a = await ask(http, { path: '/api/system/status', headers: { Host: 'hem.local' } })
  t.same(Object.keys(a.json), [
    'ctx',
    'fls_state',
    'uptime',
    'temp',
    'ts',
    'time',
    'https',
    'inited',
    'storage',
    'format',
    'fw_upgrade',
    'tts',
  ])
  t.equal(a.json.inited, false)
  t.equal(a.json.format, 'status2')
  t.equal(a.json.fw_upgrade, true)
  t.equal(a.json.tts, false)

  const { http: http2 } = await start(t, { state: systemState('P', { status: { fw_upgrade: false } }) })
  const b = await ask(http2, { path: '/api/system/status', headers: { Host: 'hem.local' } })
  for (const key of ['inited', 'format', 'fw_upgrade', 'tts']) t.notOk(key in b.json, `${key} absent`)
})

t.test('ts and time only while the clock is set', async (t) => {
  const { http } = await start(t, { clockSet: false })
  const a = await ask(http, { path: '/api/system/status' })
  t.notOk('ts' in a.json)
  t.notOk('time' in a.json)
})

// ---- wire format ---------------------------------------------------------------------------

t.test('headers on the wire: Content-Type and Content-Length exactly, no chunking', async (t) => {
  const { http, https } = await start(t)
  for (const port of [http, https]) {
    const c = await RawClient.connect(port, port === https)
    c.write(get('/api/system/status', { Connection: 'close' }))
    const { head, body } = await c.response()
    t.match(head, /^HTTP\/1\.1 200 OK\r\n/)
    t.match(head, /\r\nContent-Type: application\/json\r\n/)
    t.match(head, new RegExp(`\\r\\nContent-Length: ${Buffer.byteLength(body)}(\\r\\n|$)`))
    t.notMatch(head, /transfer-encoding/i)
    t.notMatch(head, /content-type:/, 'no lower-case variant')
    c.close()
  }
  const c = await RawClient.connect(http)
  c.write(get('/nope', { Connection: 'close' }))
  const { head, body } = await c.response()
  t.match(head, /^HTTP\/1\.1 404 Not Found\r\n/)
  t.match(head, /\r\nContent-Type: application\/json\r\n/)
  t.strictSame(JSON.parse(body), { error: 'not_found', message: 'No such resource' })
  c.close()
})

t.test('keep-alive: several requests on one socket; Connection: close closes it', async (t) => {
  const { http } = await start(t)
  const c = await RawClient.connect(http)
  for (const path of ['/api/system/status', '/api/system/version', '/nope', '/api/system/status']) {
    c.write(get(path))
    const r = await c.response()
    t.match(r.head, path === '/nope' ? /^HTTP\/1\.1 404 / : /^HTTP\/1\.1 200 /, path)
  }
  c.write(get('/api/system/status').replace('GET', 'OPTIONS'))
  t.match((await c.response()).head, /^HTTP\/1\.1 204 /)
  c.write('POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Length: 7\r\n\r\n{"n":3}')
  t.equal((await c.response()).body, '{"echo":{"n":3}}')
  t.notOk(c.ended, 'still open')
  c.write(get('/api/system/version', { Connection: 'close' }))
  t.match((await c.response()).head, /^HTTP\/1\.1 200 /)
  await c.closed
  t.ok(c.ended, 'closed by the server')
})

// ---- routing -------------------------------------------------------------------------------

t.test('404 for unknown paths, wrong methods, and P-only routes on E', async (t) => {
  const p = await start(t)
  const e = await start(t, { variant: 'E' })
  const miss = { error: 'not_found', message: 'No such resource' }
  for (const [port, method, path] of [
    [p.http, 'GET', '/'],
    [p.http, 'GET', '/api/system/nothing'],
    [p.http, 'GET', '/api/system/status/'],
    [p.http, 'POST', '/api/system/status'],
    [p.http, 'DELETE', '/api/system/version'],
    [e.http, 'GET', '/api/test/p-only'],
  ] as const) {
    const a = await ask(port, { method, path })
    t.equal(a.status, 404, `${method} ${path}`)
    t.strictSame(a.json, miss)
    t.equal(a.headers['content-type'], 'application/json')
  }
  t.equal((await ask(p.http, { path: '/api/test/p-only' })).status, 200, 'P-only route on P')
  t.equal((await ask(p.http, { path: '/api/system/status?x=1' })).status, 200, 'query strings are ignored')
})

// ---- CORS ----------------------------------------------------------------------------------

t.test('OPTIONS on any path: 204 with the preflight headers', async (t) => {
  const { http } = await start(t)
  for (const path of ['/api/system/status', '/api/anything/at/all']) {
    const a = await ask(http, { method: 'OPTIONS', path, headers: { Origin: 'https://app.example.com' } })
    t.equal(a.status, 204, path)
    t.equal(a.text, '')
    t.equal(headerValue(a, 'Access-Control-Allow-Methods'), 'GET, POST, DELETE, OPTIONS')
    t.equal(
      headerValue(a, 'Access-Control-Allow-Headers'),
      'Content-Type, Cache-Control, Pragma, Expires, Authorization, Content-Disposition',
    )
    t.equal(headerValue(a, 'Access-Control-Max-Age'), '86400')
    t.equal(headerValue(a, 'Access-Control-Allow-Credentials'), 'true')
    t.equal(headerValue(a, 'Access-Control-Allow-Origin'), 'https://app.example.com')
    t.equal(a.rawHeaders.filter((h) => h === 'Access-Control-Allow-Credentials').length, 1, 'not repeated')
  }
  const bare = await ask(http, { method: 'OPTIONS', path: '/api/system/status' })
  t.equal(bare.status, 204)
  t.equal(headerValue(bare, 'Access-Control-Allow-Origin'), undefined)
  t.equal(headerValue(bare, 'Access-Control-Allow-Credentials'), 'true')
})

t.test('CORS: a matching origin is echoed, a foreign one gets 412', async (t) => {
  const { http } = await start(t)
  const ok = await ask(http, { path: '/api/system/status', headers: { Origin: 'https://app.example.com' } })
  t.equal(ok.status, 200)
  t.equal(headerValue(ok, 'Access-Control-Allow-Origin'), 'https://app.example.com')
  t.equal(headerValue(ok, 'Access-Control-Allow-Credentials'), 'true')
  const none = await ask(http, { path: '/api/system/status' })
  t.equal(headerValue(none, 'Access-Control-Allow-Origin'), undefined)
  for (const origin of ['https://evil.test', 'http://app.example.com']) {
    const bad = await ask(http, { path: '/api/system/status', headers: { Origin: origin } })
    t.equal(bad.status, 412, origin)
    t.equal(bad.json.error, 'origin_not_allowed')
    t.equal(headerValue(bad, 'Access-Control-Allow-Origin'), undefined)
  }
  t.equal((await ask(http, { method: 'OPTIONS', path: '/x', headers: { Origin: 'https://evil.test' } })).status, 412)
  // The management app the device serves at / is always of its own origin: its configured hostname.
  const own = await ask(http, {
    path: '/api/system/status',
    headers: { Origin: `http://HEM.local:${http}`, Host: `hem.local:${http}` },
  })
  t.equal(own.status, 200, "the device's own origin")
  t.equal(headerValue(own, 'Access-Control-Allow-Origin'), `http://HEM.local:${http}`)
  const spoofed = await ask(http, {
    path: '/api/system/status',
    headers: { Origin: `https://hem.local:${http}`, Host: `hem.local:${http}` },
  })
  t.equal(spoofed.status, 412, 'but not over another scheme')
})

t.test('CORS: wildcard origins', async (t) => {
  const { http } = await start(t, { state: systemState('P', { transport: { origin: '*.example.com' } }) })
  for (const [origin, status] of [
    ['https://app.example.com', 200],
    ['http://deep.app.example.com:8080', 200],
    ['https://example.com', 412],
    ['https://evilexample.com', 412],
  ] as const) {
    const a = await ask(http, { path: '/api/system/version', headers: { Origin: origin } })
    t.equal(a.status, status, origin)
    if (status === 200) t.equal(headerValue(a, 'Access-Control-Allow-Origin'), origin)
  }
  const any = await start(t, { state: systemState('P', { transport: { origin: '*' } }) })
  const a = await ask(any.http, { path: '/api/system/version', headers: { Origin: 'https://whatever.test' } })
  t.equal(a.status, 200)
  t.equal(headerValue(a, 'Access-Control-Allow-Origin'), 'https://whatever.test')
})

// ---- bodies --------------------------------------------------------------------------------

t.test(
  '413 when Content-Length exceeds 7300: ' +
    'once the body is in (read and dropped, so a client still sending gets it), then closed',
  async (t) => {
    const { http, https, bus } = await start(t)
    for (const secure of [false, true]) {
      const c = await RawClient.connect(secure ? https : http, secure)
      c.write(
        'POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Type: application/json\r\n' +
          'Content-Length: 7301\r\n\r\n{"n":',
      )
      await sleep(100)
      t.equal(c.take(), '', `${secure ? 'https' : 'http'}: no answer while the body is still coming`)
      c.write(' '.repeat(7301 - 5))
      const r = await c.response()
      t.match(r.head, /^HTTP\/1\.1 413 /)
      t.equal(JSON.parse(r.body).error, 'payload_too_large')
      await c.closed
    }
    t.equal(bus.requests.length, 0)
  },
)

t.test('413 at once when Content-Length exceeds what the device would read to drop (16 MiB)', async (t) => {
  const { http } = await start(t)
  const c = await RawClient.connect(http)
  c.write(
    'POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${16 * 1024 * 1024 + 1}\r\n\r\n{"n":`,
  )
  // The answer comes at once, its last byte once the client is seen to have stopped sending.
  t.match(await c.head(), /^HTTP\/1\.1 413 /)
  t.match((await c.response()).body, /"error":"payload_too_large"/)
})

t.test('413 when a streamed body grows past 7300 bytes', async (t) => {
  const { http, bus } = await start(t)
  const c = await RawClient.connect(http)
  c.write(
    'POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Type: application/json\r\n' +
      'Transfer-Encoding: chunked\r\n\r\n',
  )
  const chunk = 'x'.repeat(1000)
  for (let i = 0; i < 8; i++) c.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
  t.match(await c.head(), /^HTTP\/1\.1 413 /)
  t.match((await c.response()).body, /"error":"payload_too_large"/)
  t.equal(bus.requests.length, 0)
})

t.test('a body of exactly 7300 bytes is accepted', async (t) => {
  const { http } = await start(t)
  const body = `{"n":1,"pad":"${'x'.repeat(7300 - 16)}"}`
  t.equal(Buffer.byteLength(body), 7300)
  t.equal(
    (await ask(http, { method: 'POST', path: '/api/test/echo', body, headers: { 'Content-Type': 'application/json' } }))
      .status,
    200,
  )
})

t.test('400 for malformed JSON, a non-object body, or a body against the schema', async (t) => {
  const { http, bus } = await start(t)
  for (const [body, error] of [
    ['{"n":', 'malformed_json'],
    ['', 'malformed_json'],
    ['[1,2]', 'body_not_object'],
    ['42', 'body_not_object'],
    ['null', 'body_not_object'],
    ['{"n":"one"}', 'invalid_body'],
  ] as const) {
    const a = await ask(http, {
      method: 'POST',
      path: '/api/test/echo',
      body,
      headers: { 'Content-Type': 'application/json' },
    })
    t.equal(a.status, 400, body)
    t.equal(a.json.error, error)
  }
  t.equal(bus.requests.length, 0)
  const ok = await ask(http, { method: 'POST', path: '/api/test/echo', body: '{"n":2}' })
  t.strictSame(ok.json, { echo: { n: 2 } })
})

t.test('a GET with Content-Type: application/json and no body is normal', async (t) => {
  const { http } = await start(t)
  const a = await ask(http, { path: '/api/system/status', headers: { 'Content-Type': 'application/json' } })
  t.equal(a.status, 200)
})

t.test('408 when the body is not complete within dosprot x 0.5 s', async (t) => {
  const { http, bus, timers } = await start(t, { state: systemState('P', { transport: { dosprot: 1 } }) })
  const c = await RawClient.connect(http)
  c.write('POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Length: 10\r\n\r\n{"n"')
  await until('the request arms its deadline', () => timers.armed().length > 0)
  t.same(timers.armed(), [500], "the request's deadline is dosprot 1 x 500 ms")
  timers.advance(500)
  const r = await c.response()
  t.match(r.head, /^HTTP\/1\.1 408 /)
  t.equal(JSON.parse(r.body).error, 'request_timeout')
  await c.closed
  t.equal(bus.requests.length, 0)
  const quick = await ask(http, { method: 'POST', path: '/api/test/echo', body: '{"n":1}' })
  t.equal(quick.status, 200, 'a complete request is not affected')
})

// ---- authentication and authorisation ------------------------------------------------------

t.test('401 for a present but invalid bearer, open routes included', async (t) => {
  const { http } = await start(t)
  for (const authorization of ['Bearer nope', 'Basic dXNlcjpwYXNz', 'Bearer', 'user-config']) {
    for (const path of ['/api/system/status', '/api/system/version']) {
      const a = await ask(http, { path, headers: { Authorization: authorization } })
      t.equal(a.status, 401, `${authorization} on ${path}`)
      t.equal(a.json.error, 'invalid_token')
    }
  }
  t.equal(
    (await ask(http, { path: '/api/system/status', headers: { Authorization: 'bearer user-config' } })).status,
    200,
    'scheme is case-insensitive',
  )
})

t.test('401 for a missing token on a token route', async (t) => {
  const { http } = await start(t)
  const a = await ask(http, { path: '/api/test/disk0' })
  t.equal(a.status, 401)
  t.equal(a.json.error, 'token_required')
})

t.test('token-unless-fresh: no token needed before personalisation only', async (t) => {
  const fresh = await start(t, { state: systemState('P', { status: { inited: false } }) })
  t.equal((await ask(fresh.http, { path: '/api/test/fresh' })).status, 200)
  t.equal((await ask(fresh.http, { path: '/api/test/fresh', headers: { Authorization: 'Bearer nope' } })).status, 401)
  const done = await start(t)
  t.equal((await ask(done.http, { path: '/api/test/fresh' })).status, 401)
  t.equal(
    (await ask(done.http, { path: '/api/test/fresh', headers: { Authorization: 'Bearer user-config' } })).status,
    200,
  )
})

t.test('418 for a TLS-only route over plain HTTP', async (t) => {
  const { http, https } = await start(t)
  const plain = await ask(http, { path: '/api/test/secure' })
  t.equal(plain.status, 418)
  t.strictSame(plain.json, { error: 'tls_required', message: 'This resource is served over HTTPS only' })
  t.equal((await ask(https, { path: '/api/test/secure', tls: true })).status, 200)
})

t.test('a key route checks in crypto-contract §0 order: bad token, HTTP, state, no token, scope, body', async (t) => {
  const healthy = await start(t)
  const failed = await start(t, { state: systemState('P', { status: { fls_state: 0x04 } }) })
  const fresh = await start(t, { state: systemState('P', { status: { inited: false } }) })
  const keys = async (on: Started, tls: boolean, token?: string, body = '{"label":"k"}') => {
    const a = await ask(tls ? on.https : on.http, {
      method: 'POST',
      path: '/api/test/keys',
      tls,
      body,
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    })
    return `${a.status} ${a.json?.error}`
  }
  t.equal(await keys(failed, false, 'nope'), '401 invalid_token', '1. a bad token, before plain HTTP and the state')
  t.equal(await keys(fresh, true, 'nope', '{'), '401 invalid_token', '1. ... and before a malformed body')
  t.equal(await keys(failed, false, 'user-config'), '418 tls_required', '2. plain HTTP, before the state and scope')
  t.equal(await keys(fresh, false), '418 tls_required', '2. ... and before a missing token')
  t.equal(await keys(failed, true, 'user-config'), '409 device_fault', '3. the fail state, before a wrong scope')
  t.equal(await keys(failed, true, 'master-gen'), '409 device_fault', '3. ... and before the master role')
  t.equal(await keys(failed, true), '409 device_fault', '3. ... and before a missing token')
  t.equal(await keys(failed, true, 'user-gen', '{'), '409 device_fault', '3. ... and before a malformed body')
  t.equal(await keys(fresh, true), '409 not_personalised', '3. not personalised, before a missing token')
  t.equal(await keys(fresh, true, 'user-config'), '409 not_personalised', '3. ... and before a wrong scope')
  t.same([...failed.scopeFailures, ...fresh.scopeFailures], [], 'a refusal for the state audits no scope')
  t.equal(await keys(healthy, true), '401 token_required', '4. no token')
  t.equal(await keys(healthy, true, 'user-config', '{'), '403 forbidden', '4. a wrong scope, before a malformed body')
  t.equal(await keys(healthy, true, 'master-gen'), '403 forbidden', '4. the master role')
  t.equal(healthy.scopeFailures.length, 2, 'each 403 reported for the journal')
  t.equal(await keys(healthy, true, 'user-gen', '{'), '400 malformed_json', '5. a malformed body')
  t.equal(await keys(healthy, true, 'user-gen', '{}'), '400 invalid_body', '5. a body against the schema')
  t.same(
    [healthy, failed, fresh].map((on) => on.bus.requests.length),
    [0, 0, 0],
    'nothing refused reached the service',
  )
  t.equal(await keys(healthy, true, 'user-gen'), '200 undefined', 'the rest goes on (6. is the service’s)')
})

t.test(
  'storage and attestation keep the seed’s order: a wrong scope is refused and audited in any state',
  async (t) => {
    const failed = await start(t, { state: systemState('P', { status: { fls_state: 0x04 } }) })
    const disk = async (token?: string) => {
      const a = await ask(failed.http, {
        path: '/api/test/disk',
        headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
      })
      return `${a.status} ${a.json?.error}`
    }
    t.equal(await disk(), '401 token_required')
    t.equal(await disk('user-config'), '403 forbidden', 'a wrong scope: 403, whatever the state')
    t.equal(failed.scopeFailures.length, 1, 'and reported for the journal')
    t.equal(await disk('master-kid'), '403 forbidden', 'the master role too')
    t.equal(await disk('user-disk0'), '409 device_fault', 'a right scope meets the fail state')
    t.equal((await ask(failed.http, { path: '/api/test/attest' })).status, 401, 'attestation: a token first')
    t.equal(
      (await ask(failed.http, { path: '/api/test/attest', headers: { Authorization: 'Bearer user-config' } })).status,
      409,
    )
    const fresh = await start(t, { state: systemState('P', { status: { inited: false } }) })
    t.equal((await ask(fresh.http, { path: '/api/test/attest' })).status, 200, 'a fresh device attests without a token')
    t.equal(failed.bus.requests.length, 0)
  },
)

t.test('403 for a wrong scope or role, reported to onScopeFailure', async (t) => {
  const { http, bus, scopeFailures } = await start(t)
  const a = await ask(http, { path: '/api/test/disk0', headers: { Authorization: 'Bearer user-config' } })
  t.equal(a.status, 403)
  t.equal(a.json.error, 'forbidden')
  t.equal(scopeFailures.length, 1)
  t.equal(scopeFailures[0]!.path, '/api/test/disk0')
  t.strictSame(scopeFailures[0]!.principal, { sub: 'U', scope: 'system:config' })
  t.equal(scopeFailures[0]!.bearer, 'user-config', 'with the token that proves it, for the auth service to check')
  t.match(scopeFailures[0]!.rid, /^[0-9a-f]{8,}$/)

  const master = await ask(http, {
    method: 'POST',
    path: '/api/test/cipher',
    body: JSON.stringify({ kid: KID }),
    headers: { Authorization: 'Bearer master-kid' },
  })
  t.equal(master.status, 403, 'master refused by role')
  t.equal(scopeFailures.length, 2)
  t.equal(bus.requests.length, 0)
})

t.test('scopes: prefix match for plain scopes, exact for <kid> scopes', async (t) => {
  const { http, scopeFailures } = await start(t)
  const status = async (method: string, path: string, token: string, body?: unknown): Promise<number> =>
    (
      await ask(http, {
        method,
        path,
        headers: { Authorization: `Bearer ${token}` },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })
    ).status
  t.equal(await status('GET', '/api/test/disk0', 'user-disk0rw'), 200, 'storage:disk0:rw satisfies storage:disk0')
  t.equal(
    await status('GET', '/api/test/disk0rw', 'user-disk0'),
    403,
    'storage:disk0 does not satisfy storage:disk0:rw',
  )
  t.equal(await status('POST', '/api/test/cipher', 'user-kid', { kid: KID }), 200, 'kid from the body')
  t.equal(await status('POST', '/api/test/cipher', 'user-kid', { kid: KID.toUpperCase() }), 200)
  t.equal(await status('POST', '/api/test/cipher', 'user-kid', { kid: 'f'.repeat(32) }), 403, 'another kid')
  t.equal(await status('GET', `/api/test/key/${KID}`, 'user-kid'), 200, 'kid from the path')
  t.equal(await status('GET', `/api/test/key/${'f'.repeat(32)}`, 'user-kid'), 403)
  t.equal(scopeFailures.length, 3)
})

// ---- commands and the bus ------------------------------------------------------------------

t.test('a command route sends rid, bearer token, tls, params and body, and writes the reply', async (t) => {
  const { https, bus } = await start(t)
  bus.reply = async () => ({ status: 406, body: { error: 'key_missing', message: 'No such key' } })
  const a = await ask(https, {
    method: 'POST',
    path: '/api/test/cipher',
    tls: true,
    body: JSON.stringify({ kid: KID }),
    headers: { Authorization: 'Bearer user-kid' },
  })
  t.equal(a.status, 406)
  t.strictSame(a.json, { error: 'key_missing', message: 'No such key' })
  t.equal(bus.requests.length, 1)
  const { service, op, req } = bus.requests[0]!
  t.equal(service, 'test')
  t.equal(op, 'cipher')
  t.match(req.rid, /^[0-9a-f]{8,}$/)
  // The service verifies the token itself: it gets the token, and no principal beside it to be misled by.
  t.strictSame({ ...req, rid: 'x' }, { rid: 'x', tls: true, params: {}, bearer: 'user-kid', body: { kid: KID } })
  // `source`, the client's address as the socket saw it, only shares out what strangers may queue: only the
  // routes whose service does so carry it.
  t.equal((await ask(https, { path: '/api/test/fair', tls: true })).status, 406)
  t.strictSame({ ...bus.requests[1]!.req, rid: 'x' }, { rid: 'x', tls: true, params: {}, source: '127.0.0.1' })
  const bySource = routeTable.filter((route) => route.source).map((route) => `${route.method} ${route.path}`)
  t.strictSame(
    bySource,
    [
      'GET /api/auth/init',
      'GET /api/auth/token',
      'POST /api/auth/token',
      'GET /api/system/checkin',
      'POST /api/auth/ext/init',
      'POST /api/auth/ext/request',
      'POST /api/auth/ext/token',
    ],
    "the auth service's challenges and logins, plain and external",
  )

  bus.reply = async () => ({ status: 200, body: '0|1|2\n', contentType: 'text/plain' })
  const text = await ask(https, { path: '/api/test/p-only', tls: true })
  t.equal(text.headers['content-type'], 'text/plain')
  t.equal(text.text, '0|1|2\n')
  bus.reply = async () => ({ status: 200 })
  const empty = await ask(https, { path: '/api/test/p-only', tls: true })
  t.equal(empty.text, '')
  t.equal(empty.headers['content-length'], '0')
})

t.test('503 while the system read model is unknown', async (t) => {
  const { http, https } = await start(t, { state: null })
  for (const port of [http, https]) {
    for (const path of ['/api/system/status', '/api/system/version']) {
      const a = await ask(port, { path, tls: port === https })
      t.equal(a.status, 503, path)
      t.equal(a.json.error, 'bus_unavailable')
      t.type(a.json.message, 'string')
    }
  }
})

t.test('503 when a command cannot reach the bus; 500 without internals otherwise', async (t) => {
  const { http, bus, logs } = await start(t)
  bus.reply = async () => {
    throw new BusUnavailableError('nats is down')
  }
  const down = await ask(http, { path: '/api/test/p-only' })
  t.equal(down.status, 503)
  t.equal(down.json.error, 'bus_unavailable')
  t.notMatch(down.text, /nats/)

  bus.reply = async () => {
    throw new Error('secret internal detail at /var/lib/hem')
  }
  const broken = await ask(http, { path: '/api/test/p-only' })
  t.equal(broken.status, 500)
  t.strictSame(broken.json, { error: 'internal_error', message: 'The request could not be completed' })
  t.ok(
    logs.some((l) => l.level === 50 && l.msg === 'request failed'),
    'logged for the operator',
  )
})

// ---- deadlines: over a real nats-server ------------------------------------------------------

const DEVID = '00112233aabbccdd'

/** The gateway's commands go over a real bus (nats-server, ReadModelBus) to `respond`, read on the test's clock. */
async function overRealBus(t: Test, bus: FakeBus, respond: (msg: Msg) => void, budgetMs?: number): Promise<void> {
  const nats = await startNats(t.testdir())
  t.teardown(() => nats.stop())
  const [service, gateway] = [await connect({ servers: nats.url }), await connect({ servers: nats.url })]
  t.teardown(() => Promise.all([service.close(), gateway.close()]))
  service.subscribe(new Subjects(DEVID).command('upgrade', '*'), { callback: (_err, msg) => respond(msg) })
  service.subscribe(new Subjects(DEVID).command('auth', '*'), { callback: (_err, msg) => respond(msg) })
  service.subscribe(new Subjects(DEVID).command('test', 'p'), { callback: (_err, msg) => respond(msg) })
  await service.flush()
  const real = new ReadModelBus({ nc: gateway, devid: DEVID, services: [], logger: silentLogger, now: () => NOW })
  t.teardown(() => real.close())
  bus.reply = (req, sent) => real.request(sent.service, sent.op, req, budgetMs ?? sent.budgetMs)
}

t.test("each route's deadline class reaches the command envelope", async (t) => {
  const { http, bus } = await start(t)
  const echoDeadline = (msg: Msg) =>
    void msg.respond(encode({ status: 200, body: { deadline: decode<CommandRequest>(msg.data).deadline } }))
  await overRealBus(t, bus, echoDeadline)
  const token = { Authorization: 'Bearer user-config' }
  const cases: [Ask, number][] = [
    [{ path: '/api/system/config', headers: token }, DEADLINE_MS.short],
    [{ method: 'POST', path: '/api/auth/token', body: '{"auth":"x"}' }, DEADLINE_MS.medium],
    [{ path: '/api/system/upgrade/install_fw', headers: token }, DEADLINE_MS.long],
  ]
  for (const [request, budget] of cases) {
    const answer = await ask(http, request)
    t.equal(answer.status, 200, request.path)
    t.equal(answer.json.deadline, NOW + budget, `${request.path}: now + ${budget} ms`)
  }
  t.same(DEADLINE_MS, { short: 10_000, medium: 30_000, long: 60_000 }, 'the classes as documented')
})

t.test('504 when the service took the command but did not answer in time; 503 when nobody is there', async (t) => {
  const { http, bus } = await start(t)
  const held: Msg[] = []
  // A deliberately tiny budget in place of the route's 10 s: the responder holds every command.
  await overRealBus(t, bus, (msg) => void held.push(msg), 50)
  const slow = await ask(http, { path: '/api/test/p-only' })
  t.equal(slow.status, 504)
  t.strictSame(slow.json, { error: 'timeout', message: 'The operation did not finish in time; it may still complete' })
  t.equal(held.length, 1, 'the service had the command')

  const missing = await ask(http, { method: 'POST', path: '/api/test/echo', body: '{}' })
  t.equal(missing.status, 503, 'no responder')
  t.equal(missing.json.error, 'bus_unavailable')

  bus.reply = async () => {
    throw new BusTimeoutError('internal detail')
  }
  const mapped = await ask(http, { path: '/api/test/p-only' })
  t.equal(mapped.status, 504)
  t.notMatch(mapped.text, /internal detail/)
})

// ---- logging and shutdown ------------------------------------------------------------------

t.test('each request is logged at debug with rid, method, path, status, duration; never the token', async (t) => {
  const { http, logs } = await start(t)
  await ask(http, {
    path: '/api/system/version?secret=1',
    headers: { Authorization: 'Bearer user-config', Origin: 'https://app.example.com' },
  })
  const entry = logs.find((l) => l.msg === 'http')
  t.ok(entry)
  t.match(entry, {
    level: 20,
    method: 'GET',
    path: '/api/system/version',
    status: 200,
    rid: /^[0-9a-f]{16}$/,
    ms: Number,
  })
  const all = JSON.stringify(logs)
  t.notMatch(all, /user-config/)
  t.notMatch(all, /secret/)
  t.notMatch(all, /app\.example\.com/)
})

t.test('close() lets a request in flight finish', async (t) => {
  const { gw, http, bus } = await start(t)
  bus.reply = () => new Promise((resolve) => setTimeout(() => resolve({ status: 200, body: { late: true } }), 100))
  const pending = ask(http, { path: '/api/test/p-only' })
  while (bus.requests.length === 0) await new Promise((r) => setTimeout(r, 5))
  await gw.close()
  const a = await pending
  t.strictSame(a.json, { late: true })
  await t.rejects(ask(http, { path: '/api/system/status' }), 'no longer listening')
})

t.test('a client that goes away mid-body or mid-command leaves nothing behind', async (t) => {
  const { gw, http, bus } = await start(t)
  const partial = await RawClient.connect(http)
  partial.write('POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Length: 10\r\n\r\n{"n"')
  await new Promise((r) => setTimeout(r, 20))
  partial.close()

  let answer: (reply: CommandReply) => void = () => {}
  bus.reply = () => new Promise((resolve) => (answer = resolve))
  const waiting = await RawClient.connect(http)
  waiting.write(get('/api/test/p-only'))
  while (bus.requests.length === 0) await new Promise((r) => setTimeout(r, 5))
  waiting.close()
  await waiting.closed
  await new Promise((r) => setTimeout(r, 20))
  answer({ status: 200, body: {} })

  await gw.close()
  t.equal(bus.requests.length, 1, 'only the complete request reached the bus')
  await t.rejects(ask(http, { path: '/api/system/status' }), 'closed without waiting for the departed clients')
})

t.test('an early 413 still carries the CORS headers of a matching origin', async (t) => {
  const { http } = await start(t)
  const c = await RawClient.connect(http)
  c.write(
    'POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nOrigin: https://app.example.com\r\n' +
      `Content-Length: 9000\r\n\r\n${' '.repeat(9000)}`,
  )
  const r = await c.response()
  t.match(r.head, /^HTTP\/1\.1 413 /)
  t.match(r.head, /\r\nAccess-Control-Allow-Origin: https:\/\/app\.example\.com\r\n/)
  c.close()
})

t.test('startGateway rejects when a port is taken or the TLS files cannot be loaded', async (t) => {
  const { http } = await start(t)
  const base = {
    variant: 'P' as const,
    bus: new FakeBus(),
    clock: { ...hostClock, monotonic: () => 0 },
    tokens: { verify: async () => undefined },
    logger: pino({ level: 'silent' }),
  }
  await t.rejects(startGateway({ ...base, http: { host: '127.0.0.1', port: http } }), /cannot listen on 127\.0\.0\.1/)
  await t.rejects(
    startGateway({
      ...base,
      http: { host: '127.0.0.1', port: 0 },
      https: { host: '127.0.0.1', port: 0, certFile: join(certDir, 'none.pem'), keyFile },
    }),
    /cannot load the TLS certificate/,
  )
})

t.test('HEAD is answered without a body', async (t) => {
  const { http } = await start(t)
  const c = await RawClient.connect(http)
  c.write(`HEAD /api/system/status HTTP/1.1\r\nHost: hem.local\r\n\r\n`)
  await new Promise((r) => setTimeout(r, 100))
  const head = c.take()
  t.match(head, /^HTTP\/1\.1 404 /)
  t.ok(head.endsWith('\r\n\r\n'), 'no body')
  c.write(get('/api/system/version'))
  t.match((await c.response()).head, /^HTTP\/1\.1 200 /, 'the connection is still in step')
  c.close()
})

// ---- the DIAG build's front ----------------------------------------------------------------

t.test('DIAG front: raw spaces before HTTP/1.1 route; the gateway sees the real client and transport', async (t) => {
  const { http, https, bus } = await start(t, { diag: true })
  const lastCommand = () => ({ ...bus.requests.at(-1)!.req, rid: 'x' })
  for (const [port, secure] of [
    [http, false],
    [https, true],
  ] as const) {
    const spaced = Buffer.from('GET /api/test/fair    HTTP/1.1\r\nHost: hem.local\r\n\r\n')
    const outcome = await rawExchange({ port, tls: secure }, { steps: [spaced] })
    t.equal(outcome.responses[0]?.status, 200, `${secure ? 'https' : 'http'}: answered`)
    t.strictSame(lastCommand(), { rid: 'x', tls: secure, params: {}, source: '127.0.0.1' }, 'its address and TLS')
  }
  const other = await call(`http://127.0.0.1:${http}/api/test/fair`, { localAddress: '127.0.0.2' })
  t.equal(other.status, 200)
  t.equal(lastCommand().source, '127.0.0.2', 'another client is another address')
  t.equal((await ask(http, { path: '/api/test/secure' })).status, 418, 'an HTTPS-only route over the plain front')
  t.equal((await ask(https, { path: '/api/test/secure', tls: true })).status, 200, 'and over the TLS front')
  t.equal(lastCommand().tls, true)
  const served = await new Promise<Buffer>((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: https, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().raw)
      socket.destroy()
    })
    socket.on('error', reject)
  })
  t.same(served, new crypto.X509Certificate(readFileSync(certFile)).raw, "the front serves the device's certificate")
})

t.test('DIAG front: a client sending a PROXY header of its own is dropped, never named by it', async (t) => {
  const { http, https, bus } = await start(t, { diag: true })
  const forged = proxyHeader({ remoteAddress: '10.9.9.9', remotePort: 1, localAddress: '127.0.0.1', localPort: 80 })!
  const fair = Buffer.from(get('/api/test/fair'))
  for (const target of [
    { port: http, tls: false },
    { port: https, tls: true },
  ]) {
    const first = await rawExchange(target, { steps: [Buffer.concat([forged, fair])] })
    t.same(first.responses, [], 'as its first bytes: no answer')
    t.ok(first.closed, 'the connection closed')
    const later = await rawExchange(target, {
      steps: [fair, { responses: 1 }, forged.subarray(0, 6), { pause: 20 }, Buffer.concat([forged.subarray(6), fair])],
      responses: 2,
    })
    t.equal(later.responses.length, 1, 'after an answered request, in two pieces: only that request answered')
    t.ok(later.closed, 'the connection closed')
  }
  t.notOk(
    bus.requests.some((r) => r.req.source !== '127.0.0.1'),
    'no command named another address',
  )
})

t.test('DIAG front: dosprot, an early 413 and close() act as without it', async (t) => {
  const { gw, http, https, bus, timers } = await start(t, {
    diag: true,
    state: systemState('P', { transport: { dosprot: 1 } }),
  })
  const slow = await RawClient.connect(https, true)
  slow.write('POST /api/test/echo   HTTP/1.1\r\nHost: hem.local\r\nContent-Length: 10\r\n\r\n{"n"')
  await until('the request arms its deadline', () => timers.armed().length > 0)
  timers.advance(500)
  t.match((await slow.response()).head, /^HTTP\/1\.1 408 /, 'a body not in within dosprot: 408')
  await slow.closed

  const large = await RawClient.connect(http)
  large.write(`POST /api/test/echo HTTP/1.1\r\nHost: hem.local\r\nContent-Length: ${16 * 1024 * 1024 + 1}\r\n\r\n{`)
  t.match(await large.head(), /^HTTP\/1\.1 413 /, 'too large: 413 at once')
  large.close()

  bus.reply = () => new Promise((resolve) => setTimeout(() => resolve({ status: 200, body: { late: true } }), 100))
  const pending = ask(https, { path: '/api/test/p-only', tls: true })
  await until('the command is sent', () => bus.requests.length > 0)
  await gw.close()
  t.strictSame((await pending).json, { late: true }, 'close() lets a request in flight finish')
  await t.rejects(ask(http, { path: '/api/system/status' }), 'then nothing listens')
  await t.rejects(ask(https, { path: '/api/system/status', tls: true }))
})

t.test('DIAG front: a port taken is a ListenError', async (t) => {
  const { http } = await start(t)
  await t.rejects(
    startGateway({
      variant: 'P',
      bus: new FakeBus(),
      clock: { ...hostClock, monotonic: () => 0 },
      tokens: { verify: async () => undefined },
      logger: pino({ level: 'silent' }),
      diag: true,
      http: { host: '127.0.0.1', port: http },
    }),
    ListenError,
  )
})
