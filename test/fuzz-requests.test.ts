// Property-based fuzzing of everything around the body: every route of the table, on P
// and on E, gets random methods, mangled paths (percent-encoding, dot segments, double and
// trailing slashes, raw unicode, bad escapes, queries, very long), random and broken
// Authorization headers (garbage, JWT look-alikes, a valid token with a character flipped or
// cut, expired, of the wrong scope or role, other schemes, huge, twice), Origin and Host
// values, content types and lying framing (Content-Length short or long, chunked, Expect), over
// HTTP and HTTPS. A well-formed request must get a well-formed answer that is no 5xx, with a
// JSON error body, and the connection must stay in step for the next request; a request the
// HTTP layer cannot parse must at least not hurt the device. The management app's files (P has
// one installed, E has none) get the same. Batches of requests run at once, slow requests race
// the dosprot deadline (E), and login gets eJWTs with every claim broken. No input may put the
// device in a fail state; at the end nothing was logged as an error and the journal verifies.
//
// Reboot and shutdown get only tokens they refuse (their success would end the run).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { buildEjwt } from '../client/ejwt-builder.js'
import type { Route } from '../gateway/types.js'
import { b64 } from './helpers/base64.js'
import { call } from './helpers/http.js'
import * as fuzz from './helpers/fuzz-device.js'
import {
  bodyPlan,
  headerSafe,
  nastyString,
  nastyValue,
  percentEncode,
  renderBody,
  type BodyPlan,
} from './helpers/fuzz-inputs.js'
import { api } from './helpers/keys.js'
import { keys, login, USER_PASS } from './helpers/owner.js'
import { answerProblems, header, rawExchange, requestHead, type RawPlan } from './helpers/raw-http.js'
import { until } from './helpers/until.js'
import { imageOf, upload } from './helpers/upload.js'

const SEED = 7_2028
/** Runs per route and variant (a few ms each), then runs of the properties across routes (slow: up to 1 s each). */
const RUNS = { route: 40, batches: 25, malformed: 60, slow: 10, login: 8 }

// ---- paths -----------------------------------------------------------------------------------

type PathEdit =
  | { kind: 'param'; value: string; raw: boolean }
  | { kind: 'trailing' }
  | { kind: 'double'; at: number }
  | { kind: 'dots'; at: number; dots: string }
  | { kind: 'escape'; at: number }
  | { kind: 'upper'; at: number }
  | { kind: 'query'; text: string }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'long'; size: number }

const pathEdit: fc.Arbitrary<PathEdit> = fc.oneof(
  fc.record({ kind: fc.constant('param' as const), value: nastyString, raw: fc.boolean() }),
  fc.constant({ kind: 'trailing' as const }),
  fc.record({ kind: fc.constant('double' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('dots' as const),
    at: fc.nat(),
    dots: fc.constantFrom('.', '..', '%2e', '%2E%2E', '.%2e', '...'),
  }),
  fc.record({ kind: fc.constant('escape' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('upper' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('query' as const), text: nastyString }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.constantFrom(
      '%',
      '%zz',
      '%c3',
      '%ff',
      '%00',
      '%2f',
      '%5c',
      '\\',
      ';',
      '*',
      '@',
      ':',
      '\u00e9',
      '\u{1f600}',
      '\ufffd',
    ),
  }),
  fc.record({ kind: fc.constant('long' as const), size: fc.integer({ min: 100, max: 9000 }) }),
)

/** Bytes that would end or break the request line are escaped: this is a well-formed request with a strange path. */
const lineSafe = (text: string) => text.replace(/[\0-\x20\x7f#?]/g, (c) => percentEncode(c))

function applyPath(path: string, edits: PathEdit[]): string {
  for (const edit of edits) {
    const segments = path.split('/')
    const at = (n: number) => 1 + (n % Math.max(1, segments.length - 1))
    switch (edit.kind) {
      case 'param':
        path = path.replace(/:(\w+)/g, () => (edit.raw ? lineSafe(edit.value) : percentEncode(edit.value)))
        break
      case 'trailing':
        path += '/'
        break
      case 'double':
        segments.splice(at(edit.at), 0, '')
        path = segments.join('/')
        break
      case 'dots':
        segments.splice(at(edit.at), 0, edit.dots)
        path = segments.join('/')
        break
      case 'escape': {
        const i = at(edit.at)
        segments[i] = percentEncode(segments[i]!).replace(/^([A-Za-z])/, (c) => `%${c.charCodeAt(0).toString(16)}`)
        path = segments.join('/')
        break
      }
      case 'upper': {
        const i = at(edit.at)
        segments[i] = segments[i]!.toUpperCase()
        path = segments.join('/')
        break
      }
      case 'query':
        path += `?${lineSafe(edit.text)}`
        break
      case 'insert': {
        // After the leading `/`: a request target without one is not HTTP (uWS drops it).
        const i = 1 + (edit.at % path.length)
        path = path.slice(0, i) + lineSafe(edit.text) + path.slice(i)
        break
      }
      case 'long':
        path += `/${'a'.repeat(edit.size)}`
        break
    }
  }
  return path
}

// ---- headers ---------------------------------------------------------------------------------

type AuthPlan =
  | { kind: 'none' | 'right' | 'expired' | 'wrong' | 'master' }
  | { kind: 'garbage'; text: string }
  | { kind: 'jwt'; parts: string[] }
  | { kind: 'flip'; at: number; to: number }
  | { kind: 'cut'; at: number }
  | { kind: 'scheme'; scheme: string }
  | { kind: 'suffix'; text: string }
  | { kind: 'huge'; size: number }
  | { kind: 'twice'; text: string }

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

const jwtPart = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
  fc.constantFrom('eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9', 'eyJhbGciOiJub25lIn0', '', '=', 'e30'),
  fc.base64String({ maxLength: 64 }),
)

const authPlan: fc.Arbitrary<AuthPlan> = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      { kind: 'none' as const },
      { kind: 'right' as const },
      { kind: 'expired' as const },
      { kind: 'wrong' as const },
      { kind: 'master' as const },
    ),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('garbage' as const), text: nastyString }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('jwt' as const),
      parts: fc.array(jwtPart, { minLength: 1, maxLength: 4 }),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), to: fc.nat(63) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('scheme' as const),
      scheme: fc.constantFrom(
        'bearer ',
        'BEARER ',
        'Bearer  ',
        'Bearer\t',
        'Basic ',
        'Token ',
        '',
        'Bearer:',
        'Bearer=',
      ),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('suffix' as const),
      text: fc.constantFrom(' ', '  ', ' x', '.', '=', ',Bearer x', '\t'),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('huge' as const), size: fc.integer({ min: 2000, max: 12000 }) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('twice' as const), text: nastyString }), weight: 1 },
)

/** Authorization header values for a plan (none, one, or two headers). */
function authorization(fd: fuzz.FuzzDevice, route: Route, plan: AuthPlan): string[] {
  const right = fuzz.rightToken(fd, route) ?? fd.owner.token
  const bearer = (token: string) => [`Bearer ${token}`]
  // The disruptive routes get only tokens they refuse.
  const kind =
    fuzz.DISRUPTIVE.has(fuzz.routeKey(route)) && ['right', 'master', 'scheme', 'suffix', 'twice'].includes(plan.kind)
      ? 'wrong'
      : plan.kind
  switch (kind) {
    case 'none':
      return []
    case 'right':
      return bearer(right)
    case 'expired':
      return bearer(fd.expired)
    case 'wrong':
      return bearer(fuzz.wrongToken(fd, route))
    case 'master':
      return bearer(fd.master)
    case 'garbage':
      return [headerSafe((plan as { text: string }).text)]
    case 'jwt':
      return bearer((plan as { parts: string[] }).parts.join('.'))
    case 'flip': {
      const { at, to } = plan as { at: number; to: number }
      const i = at % right.length
      const replacement = B64URL[to]! === right[i] ? B64URL[(to + 1) % 64]! : B64URL[to]!
      return bearer(right.slice(0, i) + replacement + right.slice(i + 1))
    }
    case 'cut':
      return bearer(right.slice(0, (plan as { at: number }).at % right.length))
    case 'scheme':
      return [`${(plan as { scheme: string }).scheme}${right}`]
    case 'suffix':
      return [`Bearer ${right}${(plan as { text: string }).text}`]
    case 'huge':
      return bearer('A'.repeat((plan as { size: number }).size))
    default:
      return [...bearer(right), headerSafe((plan as { text: string }).text)]
  }
}

type OriginPlan = 'none' | 'configured' | 'own' | 'upper' | 'slash' | { text: string }

// Mostly none or an allowed one: any other is refused (412) before the route is even looked up.
const originPlan: fc.Arbitrary<OriginPlan> = fc.oneof(
  { arbitrary: fc.constant('none' as const), weight: 12 },
  { arbitrary: fc.constantFrom('configured' as const, 'own' as const, 'upper' as const, 'slash' as const), weight: 3 },
  {
    arbitrary: fc.record({
      text: fc.oneof(
        nastyString,
        fc.constantFrom(
          'null',
          'https://app.example.evil',
          'https://app.example:443',
          'http://app.example',
          'https://sub.app.example',
          '*',
        ),
      ),
    }),
    weight: 1,
  },
)

function origin(fd: fuzz.FuzzDevice, plan: OriginPlan, secure: boolean): string | undefined {
  const own = `${secure ? 'https' : 'http'}://127.0.0.1`
  if (typeof plan === 'object') return headerSafe(plan.text)
  return {
    none: undefined,
    configured: 'https://app.example',
    own,
    upper: 'HTTPS://APP.EXAMPLE',
    slash: 'https://app.example/',
  }[plan]
}

const extraHeader: fc.Arbitrary<[string, string]> = fc.tuple(
  fc.constantFrom(
    'X-Fuzz',
    'Content-Type',
    'Accept',
    'Accept-Encoding',
    'Cookie',
    'Range',
    'If-None-Match',
    'Cache-Control',
    'Content-Encoding',
    'Connection',
    'Upgrade',
    'Forwarded',
    'X-Forwarded-For',
    'Content-Disposition',
    'Host',
  ),
  fc.oneof(nastyString, fc.constantFrom('close', 'keep-alive', 'Upgrade', 'websocket', 'gzip', 'bytes=0-1', '*', '')),
)

// ---- framing ---------------------------------------------------------------------------------

/**
 * How the request's body goes on the wire. `whole`: all of it, under an honest Content-Length,
 * chunked, or after `100 Continue`; `short`: a Content-Length below its size (the rest reads as
 * the next request); `long`: above it, after which the client half-closes or goes; `big`: a
 * Content-Length over the JSON limit (answered before the body).
 */
type Framing =
  | { kind: 'none' }
  | { kind: 'whole'; body: string; as: 'length' | 'chunked' | 'expect' }
  | { kind: 'short'; body: string; by: number }
  | { kind: 'long'; body: string; by: number; then: 'end' | 'destroy' }
  | { kind: 'big'; length: number }

const smallBody = fc.constantFrom('{}', '{"x":1}', 'null', '', '{"a":', '[]', '\u00e9')

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'none' as const }), weight: 5 },
  {
    arbitrary: fc.record({
      kind: fc.constant('whole' as const),
      body: smallBody,
      as: fc.constantFrom('length' as const, 'chunked' as const, 'expect' as const),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('short' as const), body: smallBody, by: fc.integer({ min: 1, max: 4 }) }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('long' as const),
      body: smallBody,
      by: fc.oneof(fc.integer({ min: 1, max: 7000 }), fc.integer({ min: 1, max: 100_000 })),
      then: fc.constantFrom('end' as const, 'destroy' as const),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('big' as const), length: fc.integer({ min: 7301, max: 1_000_000 }) }),
    weight: 1,
  },
)

// ---- one request -----------------------------------------------------------------------------

interface RequestPlan {
  method: string | undefined
  edits: PathEdit[]
  auth: AuthPlan
  origin: OriginPlan
  host: string | undefined
  type: string | undefined
  framing: Framing
  extra: [string, string][]
  /** HTTPS for 0..3 (mostly on routes that need it), else plain HTTP. */
  transport: number
}

const requestPlan: fc.Arbitrary<RequestPlan> = fc.record({
  // The methods uWS parses; it closes the connection on any other (see `breakage`).
  method: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 9 },
    {
      arbitrary: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT'),
      weight: 1,
    },
  ),
  edits: fc.oneof(
    { arbitrary: fc.constant<PathEdit[]>([]), weight: 5 },
    { arbitrary: fc.array(pathEdit, { minLength: 1, maxLength: 3 }), weight: 2 },
  ),
  auth: authPlan,
  origin: originPlan,
  host: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 6 },
    {
      arbitrary: fc.oneof(
        nastyString,
        fc.constantFrom('hem.example', 'HEM.EXAMPLE:80', '[::1]:8080', '127.0.0.1:99999', ''),
      ),
      weight: 1,
    },
  ),
  type: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', 'multipart/form-data; boundary=--x'),
    nastyString,
  ),
  framing,
  extra: fc.array(extraHeader, { maxLength: 3 }),
  transport: fc.nat(9),
})

interface Built {
  plan: RawPlan
  bytes: Buffer
  /** The request is whole and the connection should carry the next one. */
  whole: boolean
  head: boolean
}

/** Fixed path parameters that name things that exist, before any edit replaces them. */
function concretePath(fd: fuzz.FuzzDevice, route: Route): string {
  const values: Record<string, string> = { id: '00000000', offset: '0', count: '5', kid: fd.kids.aes }
  return route.path.replace(/:(\w+)(?=\/|$)/g, (whole, name: string) => values[name] ?? whole)
}

function build(fd: fuzz.FuzzDevice, route: Route, p: RequestPlan, secure: boolean): Built {
  const method = p.method ?? route.method
  const path = applyPath(p.edits.some((e) => e.kind === 'param') ? route.path : concretePath(fd, route), p.edits)
  const headers: [string, string][] = []
  if (p.host !== undefined) headers.push(['Host', headerSafe(p.host)])
  for (const value of authorization(fd, route, p.auth)) headers.push(['Authorization', value])
  const o = origin(fd, p.origin, secure)
  if (o !== undefined) headers.push(['Origin', o])
  if (p.type !== undefined) headers.push(['Content-Type', headerSafe(p.type)])
  for (const [name, value] of p.extra) headers.push([name, headerSafe(value)])
  const f = p.framing
  const body = 'body' in f ? Buffer.from(f.body) : Buffer.alloc(0)
  // uWS may close after answering a request that names any Connection option.
  const closes = p.extra.some(([name]) => name === 'Connection')
  const head = method === 'HEAD'
  switch (f.kind) {
    case 'none': {
      const bytes = requestHead(method, path, headers)
      return { plan: { steps: [bytes] }, bytes, whole: !closes, head }
    }
    case 'whole': {
      if (f.as === 'chunked') {
        const chunks = body.length
          ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')])
          : Buffer.alloc(0)
        const bytes = Buffer.concat([
          requestHead(method, path, [...headers, ['Transfer-Encoding', 'chunked']]),
          chunks,
          Buffer.from('0\r\n\r\n'),
        ])
        return { plan: { steps: [bytes] }, bytes, whole: !closes, head }
      }
      const expect = f.as === 'expect'
      const top = requestHead(method, path, [
        ...headers,
        ['Content-Length', String(body.length)],
        ...(expect ? [['Expect', '100-continue'] as [string, string]] : []),
      ])
      const steps = expect && body.length ? [top, { continue: true } as const, body] : [Buffer.concat([top, body])]
      return { plan: { steps }, bytes: Buffer.concat([top, body]), whole: !closes, head }
    }
    case 'short': {
      const bytes = Buffer.concat([
        requestHead(method, path, [...headers, ['Content-Length', String(Math.max(0, body.length - f.by))]]),
        body,
      ])
      return { plan: { steps: [bytes] }, bytes, whole: false, head }
    }
    case 'long': {
      const bytes = Buffer.concat([
        requestHead(method, path, [...headers, ['Content-Length', String(body.length + f.by)]]),
        body,
      ])
      return { plan: { steps: [bytes, { pause: 5 }], after: f.then, timeoutMs: 2000 }, bytes, whole: false, head }
    }
    case 'big': {
      const bytes = requestHead(method, path, [...headers, ['Content-Length', String(f.length)]])
      return { plan: { steps: [bytes, { pause: 5 }], after: 'destroy' }, bytes, whole: false, head }
    }
  }
}

/** Sends one planned request; its problems, with the status fuzz.check of the device after it. */
async function exchangeProblems(
  fd: fuzz.FuzzDevice,
  route: Route,
  p: RequestPlan,
): Promise<{ problems: string[]; bytes: Buffer }> {
  const secure = route.tls === 'required' ? p.transport < 8 : p.transport < 2
  const built = build(fd, route, p, secure)
  const followUp = requestHead('GET', '/api/system/status', [])
  const plan: RawPlan = built.whole
    ? { ...built.plan, steps: [...built.plan.steps, { responses: 1 }, followUp], responses: 2, head: [built.head] }
    : { ...built.plan, head: [built.head] }
  const outcome = await rawExchange(secure ? fd.https : fd.http, plan)
  const problems: string[] = []
  const [first, second] = outcome.responses
  if (p.framing.kind === 'long' || p.framing.kind === 'big' || p.framing.kind === 'short') {
    // Not all of it was sent, or more than announced: whatever answer comes must still be sound.
    if (first) problems.push(...answerProblems(first, built.head))
  } else {
    problems.push(...fuzz.outcomeProblems(outcome, built.head))
    const closing = first && (first.status === 408 || first.status === 413)
    if (built.whole && first && !closing && second?.status !== 200) {
      const answer = second ? second.status : outcome.timedOut ? 'nothing in time' : 'with a close'
      problems.push(`the status that followed a ${first.status} answered ${answer}`)
    }
  }
  return { problems, bytes: built.bytes }
}

// ---- requests the HTTP layer cannot parse ----------------------------------------------------

/** Ways to break a request below HTTP's grammar: uWS closes or ignores these; the gateway never sees them. */
type Breakage =
  | { kind: 'method'; method: string }
  | { kind: 'byte'; at: number; byte: number }
  | { kind: 'version'; version: string }
  | { kind: 'no-host' }
  | { kind: 'lf' }
  | { kind: 'headers'; count: number }
  | { kind: 'length'; value: string }
  | { kind: 'chunks'; text: string }
  | { kind: 'noise'; bytes: Uint8Array }

const breakage: fc.Arbitrary<Breakage> = fc.oneof(
  fc.record({
    kind: fc.constant('method' as const),
    method: fc.oneof(
      fc.constantFrom('PROPFIND', 'M-SEARCH', 'get', 'X_Y', 'SEARCH', 'QUERY'),
      fc.string({ minLength: 1, maxLength: 12 }).map((m) => m.replace(/[\0-\x20\x7f]/g, 'X')),
    ),
  }),
  fc.record({
    kind: fc.constant('byte' as const),
    at: fc.nat(),
    byte: fc.oneof(fc.nat(0x20), fc.constantFrom(0x7f, 0x20, 0x3a, 0xff)),
  }),
  fc.record({
    kind: fc.constant('version' as const),
    version: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', 'HTTP/1', ''),
  }),
  fc.constant({ kind: 'no-host' as const }),
  fc.constant({ kind: 'lf' as const }),
  fc.record({ kind: fc.constant('headers' as const), count: fc.integer({ min: 40, max: 400 }) }),
  fc.record({
    kind: fc.constant('length' as const),
    value: fc.constantFrom('-1', 'abc', '1e3', '+2', '99999999999999999999999', '2, 2', '0x10', ''),
  }),
  fc.record({
    kind: fc.constant('chunks' as const),
    text: fc.constantFrom(
      'zz\r\n{}\r\n0\r\n\r\n',
      '2\r\n{}0\r\n\r\n',
      '-1\r\n',
      'ffffffffffffffffff\r\n',
      '2;x=y\r\n{}\r\n0\r\n\r\n',
    ),
  }),
  fc.record({ kind: fc.constant('noise' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 300 }) }),
)

function broken(fd: fuzz.FuzzDevice, route: Route, b: Breakage): Buffer {
  const path = concretePath(fd, route)
  // Reboot and shutdown only with a token they refuse: many breakages still parse, and their success ends the run.
  const bearer = fuzz.DISRUPTIVE.has(fuzz.routeKey(route))
    ? fuzz.wrongToken(fd, route)
    : (fuzz.rightToken(fd, route) ?? fd.owner.token)
  const token: [string, string][] = [['Authorization', `Bearer ${bearer}`]]
  switch (b.kind) {
    case 'method':
      return requestHead(b.method, path, token)
    case 'byte': {
      const bytes = Buffer.concat([requestHead(route.method, path, token), Buffer.from('')])
      const at = b.at % (bytes.length - 4)
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([b.byte]), bytes.subarray(at)])
    }
    case 'version':
      return Buffer.from(`${route.method} ${path} ${b.version}\r\nHost: 127.0.0.1\r\n\r\n`)
    case 'no-host':
      return Buffer.from(`${route.method} ${path} HTTP/1.1\r\n\r\n`)
    case 'lf':
      return Buffer.from(`${route.method} ${path} HTTP/1.1\nHost: 127.0.0.1\n\n`)
    case 'headers':
      return requestHead(route.method, path, [
        ...token,
        ...Array.from({ length: b.count }, (_, i): [string, string] => [`X-${i}`, String(i)]),
      ])
    case 'length':
      return Buffer.concat([
        requestHead(route.method, path, [...token, ['Content-Length', b.value]]),
        Buffer.from('{}'),
      ])
    case 'chunks':
      return Buffer.concat([
        requestHead(route.method, path, [...token, ['Transfer-Encoding', 'chunked']]),
        Buffer.from(b.text),
      ])
    case 'noise':
      return Buffer.from(b.bytes)
  }
}

// ---- slow requests ---------------------------------------------------------------------------

/**
 * A request sent in two parts with a pause between, while `http_option_dosprot_mode` 1 gives
 * each request 500 ms: the pause lands before, around or after the deadline, and the rest of
 * the body may never come.
 */
interface SlowPlan {
  route: number
  /** Bytes of the body sent with the head. */
  split: number
  pause: number
  rest: boolean
}

const slowPlan = (routes: number): fc.Arbitrary<SlowPlan> =>
  fc.record({
    route: fc.nat(routes - 1),
    split: fc.nat(6),
    pause: fc.oneof(fc.integer({ min: 0, max: 900 }), fc.integer({ min: 480, max: 520 })),
    rest: fc.boolean(),
  })

async function slowProblems(
  fd: fuzz.FuzzDevice,
  route: Route,
  p: SlowPlan,
): Promise<{ problems: string[]; bytes: Buffer }> {
  const body = Buffer.from('{"x":1}')
  const token = fuzz.rightToken(fd, route)
  const head = requestHead(route.method, concretePath(fd, route), [
    ['Content-Length', String(body.length)],
    ...(token ? [['Authorization', `Bearer ${token}`] as [string, string]] : []),
  ])
  const split = Math.min(p.split, body.length - 1)
  const steps = [
    Buffer.concat([head, body.subarray(0, split)]),
    { pause: p.pause },
    ...(p.rest ? [body.subarray(split)] : []),
  ]
  const outcome = await rawExchange(route.tls === 'required' ? fd.https : fd.http, { steps, timeoutMs: 3000 })
  const problems = fuzz.outcomeProblems(outcome)
  const [first] = outcome.responses
  // The rest of the request may still come: the connection cannot carry another one.
  if (first?.status === 408 && header(first, 'connection') !== 'close') problems.push('a 408 that keeps the connection')
  return { problems, bytes: Buffer.concat([head, body]) }
}

// ---- login -----------------------------------------------------------------------------------

/** A login eJWT broken in one claim (still correctly signed), in its header or MAC, or in the body around it. */
type LoginPlan =
  | { kind: 'valid' }
  | { kind: 'claim'; claim: string; value: unknown }
  | { kind: 'header'; json: string }
  | { kind: 'mac'; at: number; xor: number }
  | { kind: 'body'; body: BodyPlan }

const loginPlan: fc.Arbitrary<LoginPlan> = fc.oneof(
  fc.constant({ kind: 'valid' as const }),
  fc.record({
    kind: fc.constant('claim' as const),
    claim: fc.constantFrom('jti', 'aud', 'exp', 'iat', 'iss', 'scope', 'cfg', '__proto__'),
    value: nastyValue,
  }),
  fc.record({
    kind: fc.constant('header' as const),
    json: fc.constantFrom(
      '{"alg":"HS256","typ":"JWT"}',
      '{"ecdh":"x25519","alg":"none","typ":"JWT"}',
      '{"ecdh":"x25519","alg":"HS256","typ":"JWT","x":1}',
      '[]',
      'null',
      '{"ecdh":"x25519","alg":"HS256","typ":"JWT","alg":"HS256"}',
    ),
  }),
  fc.record({ kind: fc.constant('mac' as const), at: fc.nat(31), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('body' as const), body: bodyPlan(['auth']) }),
)

async function loginBody(fd: fuzz.FuzzDevice, plan: LoginPlan): Promise<Buffer> {
  const challenge = (await call(`${fd.owner.base}/api/auth/token`)).json as {
    jti: string
    spk: string
    eid: string
    exp: number
  }
  const key = await keys.get(USER_PASS, challenge.eid)
  const now = Math.floor(Date.now() / 1000)
  const claims: Record<string, unknown> = {
    jti: challenge.jti,
    aud: challenge.spk,
    exp: challenge.exp,
    iat: now,
    iss: b64(key.publicKey),
    scope: 'logger:get',
  }
  if (plan.kind === 'claim') claims[plan.claim] = plan.value
  let ejwt = buildEjwt({
    seed: key.seed,
    spk: challenge.spk,
    payloadJson: JSON.stringify(claims),
    ...(plan.kind === 'header' ? { headerJson: plan.json } : {}),
  })
  if (plan.kind === 'mac') {
    const [header, payload, mac] = ejwt.split('.') as [string, string, string]
    const bytes = Buffer.from(mac, 'base64url')
    bytes[plan.at]! ^= plan.xor
    ejwt = `${header}.${payload}.${bytes.toString('base64url')}`
  }
  return plan.kind === 'body' ? renderBody(plan.body, [{ auth: ejwt }]) : Buffer.from(JSON.stringify({ auth: ejwt }))
}

// ---- the properties --------------------------------------------------------------------------

/** Files of the management app, outside the route table: P serves them once one is installed, E has none. */
const SITE = ['/', '/app.js', '/assets/style.css'].map((path): Route => ({
  method: 'GET',
  path,
  variants: ['P', 'E'],
  auth: 'open',
  tls: 'any',
  handler: { kind: 'command', service: 'site', op: 'file' },
}))

/**
 * Every route but the uploads (fuzz-uploads.test.ts), and the app's files; login is fuzzed on its own, at the brake's
 * pace.
 */
const fuzzed = (fd: fuzz.FuzzDevice) => [
  ...fd.routes.filter((route) => route.handler.kind !== 'upload' && fuzz.routeKey(route) !== 'POST /api/auth/token'),
  ...SITE,
]

/** A small management app, installed through the upgrade routes, so that P's static files are there to fuzz. */
async function installApp(fd: fuzz.FuzzDevice, dir: string): Promise<void> {
  mkdirSync(join(dir, 'assets'), { recursive: true })
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>fuzz</title><script src="app.js"></script>')
  writeFileSync(join(dir, 'app.js'), 'console.log("fuzz")')
  writeFileSync(join(dir, 'assets', 'style.css'), 'body { color: black }')
  const token = fd.owner.token
  const uploaded = await upload(fd.owner.base, 'ui', await imageOf(dir, 'ui', '1.0.0', ['P']), {}, token)
  if (uploaded.status !== 200) throw new Error(`the app upload answered ${uploaded.status}`)
  await until(
    'the app verifies',
    async () => (await api(`${fd.owner.base}/api/system/upgrade/check_ui`, token)).status === 200,
  )
  const installed = await api(`${fd.owner.base}/api/system/upgrade/install_ui`, token)
  if (installed.status !== 200) throw new Error(`the app install answered ${installed.status}`)
}

async function fuzzLogin(fd: fuzz.FuzzDevice): Promise<void> {
  const route = fd.routes.find((r) => fuzz.routeKey(r) === 'POST /api/auth/token')!
  await fuzz.check(
    fc.asyncProperty(loginPlan, async (plan) => {
      const body = await loginBody(fd, plan)
      const request = Buffer.concat([
        requestHead('POST', route.path, [
          ['Content-Type', 'application/json'],
          ['Content-Length', String(body.length)],
        ]),
        body,
      ])
      const outcome = await rawExchange(fd.http, { steps: [request] })
      const problems = fuzz.outcomeProblems(outcome)
      const status = outcome.responses[0]?.status
      if (plan.kind === 'valid' && status !== 200) problems.push(`a valid login answered ${status}`)
      fuzz.assertNone([...problems, ...(await fuzz.statusProblems(fd))], request)
    }),
    SEED,
    RUNS.login,
  )
}

const scopes = ['system:upgrade', 'logger:get', 'keymgmt:list', 'keymgmt:get', 'keymgmt:derive']
// Both devices log in at once: each login takes the brake's 500 ms, and each device has its own brake.
const devices = {
  P: fuzz.fuzzDevice(t, 'P', { scopes: [...scopes, 'storage:disk0'] }),
  E: fuzz.fuzzDevice(t, 'E', { scopes }),
}

for (const variant of ['P', 'E'] as const) {
  t.test(`variant ${variant}`, async (t) => {
    const fd = await devices[variant]
    // The crypto routes' right token: their bodies (`{}`, `{"x":1}`, ...) reach the key store's parser.
    fd.tokens.set(`keymgmt:use:${fd.kids.aes}`, await login(fd.owner.base, `keymgmt:use:${fd.kids.aes}`))
    if (variant === 'P') await installApp(fd, t.testdir())
    // Logins wait on the brake: they run beside the other properties rather than after them.
    const logins = fuzzLogin(fd).then(
      () => undefined,
      (err: unknown) => err,
    )
    const routes = fuzzed(fd)
    for (const [index, route] of routes.entries()) {
      await t.test(fuzz.routeKey(route), () =>
        fuzz.check(
          fc.asyncProperty(requestPlan, async (p) => {
            const { problems, bytes } = await exchangeProblems(fd, route, p)
            fuzz.assertNone([...problems, ...(await fuzz.statusProblems(fd))], bytes)
          }),
          SEED + index,
          RUNS.route,
        ),
      )
    }
    await t.test('batches of requests at once, across routes', () =>
      fuzz.check(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.nat(routes.length - 1), requestPlan), { minLength: 2, maxLength: 8 }),
          async (batch) => {
            const results = await Promise.all(batch.map(([i, p]) => exchangeProblems(fd, routes[i]!, p)))
            for (const { problems, bytes } of results) fuzz.assertNone(problems, bytes)
            fuzz.assertNone(await fuzz.statusProblems(fd), 'GET /api/system/status after the batch')
          },
        ),
        SEED,
        RUNS.batches,
      ),
    )
    await t.test('requests the HTTP layer cannot parse', () =>
      fuzz.check(
        fc.asyncProperty(fc.nat(routes.length - 1), breakage, async (i, b) => {
          const bytes = broken(fd, routes[i]!, b)
          // uWS leaves most of these unanswered until its idle timeout: a short look is enough.
          const outcome = await rawExchange(fd.http, { steps: [bytes, { pause: 20 }], after: 'destroy' })
          const fives = outcome.responses.filter((r) => r.status >= 500).map((r) => `answered ${r.status}`)
          fuzz.assertNone([...fives, ...(await fuzz.statusProblems(fd))], bytes)
        }),
        SEED,
        RUNS.malformed,
      ),
    )
    if (variant === 'E') {
      await t.test('slow requests against the dosprot deadline', async (t) => {
        t.equal(
          (await api(`${fd.owner.base}/api/system/config`, fd.owner.token, { http_option_dosprot_mode: 1 })).status,
          200,
          'dosprot 1: 500 ms a request',
        )
        await fuzz.check(
          fc.asyncProperty(slowPlan(routes.length), async (p) => {
            const { problems, bytes } = await slowProblems(fd, routes[p.route]!, p)
            fuzz.assertNone([...problems, ...(await fuzz.statusProblems(fd))], bytes)
          }),
          SEED,
          RUNS.slow,
        )
        t.equal(
          (await api(`${fd.owner.base}/api/system/config`, fd.owner.token, { http_option_dosprot_mode: 0 })).status,
          200,
          'dosprot off again',
        )
      })
    }
    await t.test('POST /api/auth/token', async () => {
      const err = await logins
      if (err) throw err
    })
    await fuzz.finish(t, fd)
  })
}
