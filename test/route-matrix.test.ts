// Every route of the gateway's table × every kind of caller, on real devices (P and E): the
// auth rules of the contract (§2.3, §2.4) and the seed (§5, §6), generated from `routeTable`
// so that a route added later is covered without new test code.
//
// The key-management and crypto routes check in crypto-contract §0's order (a bad token 401, plain
// HTTP 418, the fail state or no owner 409 even for a wrong scope, no token 401, scope or role
// 403), the external authenticator's (/api/auth/ext/*) in the same without the 418 (ext-auth contract
// §1.0); storage and attestation in the seed's (401, 403 journaled in any state, then 409). The
// personalised devices are put in a fail state (a temperature fault) for a last pass.
//
// Routes whose success would disturb the rest of the run are called only with tokens that must
// be refused (no token, invalid token, wrong scope, wrong role); their success is tested elsewhere:
//   GET /api/system/reboot    restarts every service, and every token dies with it
//   GET /api/system/shutdown  stops the device
import t, { type Test } from 'tap'
import { Value } from '@sinclair/typebox/value'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { routeTable } from '../gateway/routes.js'
import type { Role } from '../protocol/scopes.js'
import type { Route } from '../gateway/types.js'
import type { Device } from '../runtime/types.js'
import { skippingClock } from './helpers/clock.js'
import type { Clock } from '../hal/types.js'
import { bootDevice } from './helpers/device.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { MASTER_PASS, USER_PASS, bearer, login, owned } from './helpers/owner.js'

// A directory of this run's own: t.testdir() is shared by every concurrent run of this file.
const root = mkdtempSync(join(tmpdir(), 'hemd-route-matrix-'))
t.teardown(() => rmSync(root, { recursive: true, force: true }))
let dirs = 0
const newDir = (name: string) => join(root, `${++dirs}-${name}`)

type Variant = 'P' | 'E'
type LoginRole = Extract<Role, 'U' | 'M'>

const DISRUPTIVE = new Set(['GET /api/system/reboot', 'GET /api/system/shutdown'])

/** Open routes that refuse on purpose once the device is personalised (no scope check, no audit). */
const REFUSED_WHEN_PERSONALISED: Record<string, number> = {
  'POST /api/system/config/provisioning': 403,
  // The minimal body's `authreply` is no eJWT: ext-auth contract §1.5 answers that 401, whoever asks.
  'POST /api/auth/ext/token': 401,
}

/** What the contract promises a fresh device answers without a token (routes not named: only "not 401/403"). */
const FRESH_WITHOUT_TOKEN: Record<string, number> = {
  'GET /api/system/version': 200,
  'GET /api/system/status': 200,
  'GET /api/auth/init': 200,
  'GET /api/auth/token': 409,
  'GET /api/system/config/attestation': 200,
  'GET /api/system/checkin': 200,
  'GET /api/system/selftest': 200,
  'GET /api/system/config': 401,
  // Reaches the provisioning check (an empty crt is malformed): no token was asked for.
  'POST /api/system/config/provisioning': 400,
  // A restore's upload needs no token on a fresh device: the matrix's empty body is refused as such.
  'POST /api/system/restore/upload': 400,
  // Nor does the restore: nothing was uploaded.
  'POST /api/system/restore': 409,
}

/** Values for path parameters and `<name>` scope placeholders. */
const SAMPLES: Record<string, string> = { id: '0000abcd', offset: '0', kid: '00112233445566778899aabbccddeeff' }
const sample = (name: string) => SAMPLES[name] ?? '0'

/** Plausible scopes that a route may not accept, tried in order for the wrong-scope case. */
const WRONG_SCOPE_CANDIDATES = ['keymgmt:list', 'logger:get', 'storage:disk0', 'system:shutdown', 'system:config']

/**
 * Scopes no access rule names, which a login grants all the same (the family's certification asks
 * for the first two): every route with scopes refuses them, and a route of any scope takes them.
 * `keymgmt:use:` is a use scope's kind without a KID, which the gateway lets through to the key
 * store where it cannot see the KID.
 */
const UNKNOWN_SCOPES = ['system:wrong', 'system:reboot', 'keymgmt:use:']

const PASSPHRASE: Record<LoginRole, string> = { U: USER_PASS, M: MASTER_PASS }
const LOGIN_ROLES: LoginRole[] = ['U', 'M']
const ALL: Role[] = ['U', 'M', 'ExtAuth']

const keyOf = (route: Route) => `${route.method} ${route.path}`

/** Device contract §1: the key-management and crypto endpoints, the ones in crypto-contract §0's order. */
const isKeyRoute = (route: Route) => /^\/api\/(keymgmt|crypto)\//.test(route.path)

/** The external authenticator's: §0's order without the 418 (ext-auth contract §1.0). */
const isExtRoute = (route: Route) => route.path.startsWith('/api/auth/ext/')

/** Backup and restore (docs/backup.md): HTTPS only, with the key routes' order. */
const isBackupRoute = (route: Route) => /^\/api\/system\/(backup|restore)(\/|$)/.test(route.path)

/** The routes that refuse the device's state (409) before a missing token, a role or a scope. */
const stateFirst = (route: Route) => isKeyRoute(route) || isExtRoute(route) || isBackupRoute(route)

/** The LOG_TYPE under which every 200, 400 and 406 of an operation is journaled (crypto-contract §0, §2, §3). */
const OPERATION_LOG: Record<string, number> = {
  'POST /api/keymgmt/derive': LogType.KEY_DERIVE,
  'POST /api/crypto/cipher/encrypt': LogType.CRYPTO_ENCRYPT,
  'POST /api/crypto/cipher/decrypt': LogType.CRYPTO_DECRYPT,
  'POST /api/crypto/cipher/wrap': LogType.CRYPTO_WRAP,
  'POST /api/crypto/cipher/unwrap': LogType.CRYPTO_UNWRAP,
  'POST /api/crypto/exdsa/sign': LogType.CRYPTO_EXDSA_SIGN,
  'POST /api/crypto/exdsa/verify': LogType.CRYPTO_EXDSA_VERIFY,
  'POST /api/crypto/hmac/hash': LogType.CRYPTO_HMAC_HASH,
  'POST /api/crypto/hmac/verify': LogType.CRYPTO_HMAC_VERIFY,
  'POST /api/crypto/ecdh': LogType.CRYPTO_ECDH,
  'POST /api/crypto/pqc/mlkem/encaps': LogType.CRYPTO_MLKEM_ENCAPS,
  'POST /api/crypto/pqc/mlkem/decaps': LogType.CRYPTO_MLKEM_DECAPS,
  'POST /api/crypto/pqc/mldsa/sign': LogType.CRYPTO_MLDSA_SIGN,
  'POST /api/crypto/pqc/mldsa/verify': LogType.CRYPTO_MLDSA_VERIFY,
}
const RESULT_OF: Record<number, number> = { 200: LogResult.OK, 400: LogResult.ERROR, 406: LogResult.FAILED }

const fill = (scope: string) => scope.replace(/<(\w+)>$/, (_, name: string) => sample(name))

/** The contract's matching, written independently of protocol/scopes.ts: prefix on `:`, exact for `<kid>`. */
function satisfies(tokenScope: string, required: string): boolean {
  const wanted = fill(required)
  if (/<\w+>$/.test(required)) return tokenScope.toLowerCase() === wanted.toLowerCase()
  return tokenScope === wanted || tokenScope.startsWith(`${wanted}:`)
}

function wrongScopeFor(route: Route): string {
  const scopes = route.scopes ?? []
  const wrong = WRONG_SCOPE_CANDIDATES.find((candidate) => !scopes.some((s) => satisfies(candidate, s)))
  if (!wrong) throw new Error(`no wrong-scope candidate for ${keyOf(route)}: extend WRONG_SCOPE_CANDIDATES`)
  return wrong
}

/**
 * A scope the route accepts (any one when it names none). The storage routes' `storage` is the
 * kind, which names no disk (the storage service's 406): a disk's scope is asked for instead.
 */
function rightScopesFor(route: Route): string[] {
  return (
    route.scopes?.map((scope) => (scope === 'storage' ? 'storage:disk1:rw' : fill(scope))) ?? [
      WRONG_SCOPE_CANDIDATES[0]!,
    ]
  )
}

const concretePath = (route: Route) => route.path.replace(/:(\w+)/g, (_, name: string) => sample(name))

function pathMatches(pattern: string, path: string): boolean {
  const a = pattern.split('/')
  const b = path.split('/')
  return a.length === b.length && a.every((segment, i) => segment.startsWith(':') || segment === b[i])
}

/** A route of the other variant answers 404 unless a route of this variant serves the same request. */
function servedOn(variant: Variant, route: Route): boolean {
  const path = concretePath(route)
  return routeTable.some((r) => r.variants.includes(variant) && r.method === route.method && pathMatches(r.path, path))
}

/** The smallest body the route's schema accepts; `{}` where TypeBox cannot make one (patterns, formats). */
function minimalBody(route: Route): Record<string, unknown> {
  try {
    return Value.Create(route.body!) as Record<string, unknown>
  } catch {
    return {}
  }
}

/** The request for a route (over HTTPS if it needs it, unless `plain`): sample path parameters, a schema's body. */
function send(device: Device, route: Route, token?: string, plain = false): Promise<Answer> {
  const base = route.tls === 'required' && !plain ? device.httpsUrl! : device.httpUrl!
  const headers: Record<string, string> = token === undefined ? {} : bearer(token)
  let body: string | undefined
  if (route.body) {
    const placeholders = Object.fromEntries(
      (route.scopes ?? []).flatMap((s) => [...(/<(\w+)>$/.exec(s) ?? [])].slice(1).map((n) => [n, sample(n)])),
    )
    body = JSON.stringify({ ...minimalBody(route), ...placeholders })
    headers['content-type'] = 'application/json'
  }
  return call(`${base}${concretePath(route)}`, {
    method: route.method,
    headers,
    ...(body === undefined ? {} : { body }),
  })
}

/** Polls until `check` holds or the deadline passes; the caller asserts on what it then sees. */
async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

/** Past authentication and authorisation: whatever the handler made of it, not 401 or 403. */
function notRefused(t: Test, answer: Answer, what: string): void {
  t.notOk(
    answer.status === 401 || answer.status === 403,
    `${what} → not 401/403 (got ${answer.status} ${answer.text.slice(0, 120)})`,
  )
}

async function scopeRecords(device: Device) {
  return (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.FAILED_SCOPE_CHECK)
}

/** The journal records of one request: they carry the `rid` its answer names in `X-Request-Id`. */
async function recordsOf(device: Device, answer: Answer) {
  const rid = answer.headers['x-request-id']
  return (await readJournal(device.dataDir)).records.filter(
    (r) => r.decoded?.rid !== undefined && r.decoded.rid === rid,
  )
}

/**
 * Whatever the request journaled states the status it was answered with; an operation's 200, 400
 * or 406 is one record of its LOG_TYPE, with the result that status means.
 */
async function journaledAs(t: Test, device: Device, route: Route, answer: Answer, what: string): Promise<void> {
  t.match(answer.headers['x-request-id'], /^[0-9a-f]{16}$/, `${what}: X-Request-Id`)
  const records = await recordsOf(device, answer)
  for (const record of records) {
    if (record.decoded?.source !== undefined)
      t.equal(record.decoded.source, answer.status, `${what}: record ${record.type} states the answer's status`)
  }
  const type = OPERATION_LOG[keyOf(route)]
  if (type === undefined) return
  t.ok(answer.status in RESULT_OF, `${what}: the operation answers 200, 400 or 406 (got ${answer.status})`)
  const own = records.filter((r) => r.type === type)
  t.equal(own.length, 1, `${what}: one record of LOG_TYPE ${type}`)
  t.match(own[0], { result: RESULT_OF[answer.status], decoded: { source: answer.status } }, `${what}: as answered`)
}

interface Personalised {
  device: Device
  variant: Variant
  /** Tokens by `${role} ${scope}`. */
  tokens: Map<string, string>
  /** Minted for a minute, then outlived: the device's clock was moved on two minutes. */
  expired: string
}

/** The host's time, moved on by `skew` ms: tokens expire without the test waiting for them. */
function skewableClock(): Clock & { skew: number } {
  return {
    ...skippingClock(),
    skew: 0,
    now() {
      return Date.now() + this.skew
    },
  }
}

/** Every (role, scope) the matrix will need, logged in once each (a login costs ≥ 500 ms). */
function neededLogins(variant: Variant): [LoginRole, string][] {
  const wanted = new Map<string, [LoginRole, string]>()
  const want = (role: LoginRole, scope: string) => wanted.set(`${role} ${scope}`, [role, scope])
  want('U', WRONG_SCOPE_CANDIDATES[0]!)
  for (const scope of UNKNOWN_SCOPES) want('U', scope)
  for (const route of routeTable) {
    if (!route.variants.includes(variant)) continue
    if (route.scopes) want('U', wrongScopeFor(route))
    const roles = route.roles ?? ALL
    for (const role of LOGIN_ROLES) {
      // Allowed roles try every right scope; a refused role needs one right scope to be refused with.
      for (const scope of roles.includes(role) ? rightScopesFor(route) : rightScopesFor(route).slice(0, 1))
        want(role, scope)
    }
  }
  return [...wanted.values()]
}

async function personalisedDevice(t: Test, dir: string, variant: Variant): Promise<Personalised> {
  const clock = skewableClock()
  const { device } = await owned(t, { variant, dataDir: `${dir}/${variant}`, boot: { clock } })
  const tokens = new Map<string, string>()
  for (const [role, scope] of neededLogins(variant))
    tokens.set(`${role} ${scope}`, await login(device.httpUrl!, scope, PASSPHRASE[role]))
  const expired = await login(
    device.httpUrl!,
    WRONG_SCOPE_CANDIDATES[0]!,
    USER_PASS,
    Math.floor(Date.now() / 1000) + 60,
  )
  const route = routeTable.find((r) => keyOf(r) === 'GET /api/keymgmt/list')!
  t.equal((await send(device, route, expired)).status, 200, `${variant}: the short-lived token works while it lives`)
  // The hour-long tokens above still have 58 minutes; logins after this would need the skew too.
  clock.skew = 120_000
  return { device, variant, tokens, expired }
}

/** Runs the matrix on one personalised device; `foreign` is a well-formed token this device never minted. */
async function matrix(t: Test, { device, variant, tokens, expired }: Personalised, foreign: string): Promise<void> {
  const token = (role: LoginRole, scope: string) => {
    const value = tokens.get(`${role} ${scope}`)
    if (!value) throw new Error(`no ${role} token for ${scope}`)
    return value
  }
  let audited = (await scopeRecords(device)).length

  /** Not a scope refusal: the journal gained no FAILED_SCOPE_CHECK. */
  const noAudit = async (what: string) =>
    t.equal((await scopeRecords(device)).length, audited, `${what}: no FAILED_SCOPE_CHECK`)

  const refused = async (what: string, route: Route, role: LoginRole, scope: string) => {
    const answer = await send(device, route, token(role, scope))
    t.equal(answer.status, 403, `${what} → 403`)
    t.equal(answer.json?.error, 'forbidden', `${what}: error body`)
    let records = await scopeRecords(device)
    await eventually(async () => (records = await scopeRecords(device)).length > audited)
    t.equal(records.length, audited + 1, `${what}: exactly one FAILED_SCOPE_CHECK`)
    const record = records.at(-1)
    if (!record) return
    t.equal(record.result, LogResult.FAILED, `${what}: result FAILED`)
    t.equal(record.subject, role, `${what}: subject`)
    t.match(
      record.decoded,
      { source: 403, scope, rid: answer.headers['x-request-id'] },
      `${what}: source 403, the token's scope and the request's id`,
    )
    audited = records.length
  }

  for (const route of routeTable) {
    const key = keyOf(route)
    const name = `${variant} ${key}`
    if (!route.variants.includes(variant)) {
      if (servedOn(variant, route)) continue
      for (const [label, bearerToken] of [
        ['no token', undefined],
        ['invalid token', foreign],
        ['valid token', token('U', WRONG_SCOPE_CANDIDATES[0]!)],
      ] as const) {
        t.equal((await send(device, route, bearerToken)).status, 404, `${name}, ${label}: other variant → 404`)
      }
      await noAudit(`${name}, other variant`)
      continue
    }

    for (const [label, refusedToken] of [
      ['invalid token', foreign],
      ['expired token', expired],
    ] as const) {
      const answer = await send(device, route, refusedToken)
      t.equal(answer.status, 401, `${name}, ${label} → 401`)
      t.equal(answer.json?.error, 'invalid_token', `${name}, ${label}: error body`)
      t.same(await recordsOf(device, answer), [], `${name}, ${label}: nothing journaled`)
    }
    if (route.tls === 'required') {
      for (const [label, plainToken, expected] of [
        ['invalid token', foreign, 401],
        ['expired token', expired, 401],
        ['no token', undefined, 418],
        ['wrong scope', route.scopes && token('U', wrongScopeFor(route)), 418],
      ] as const) {
        const answer = await send(device, route, plainToken, true)
        t.equal(answer.status, expected, `${name}, ${label} over plain HTTP → ${expected}`)
      }
    }

    const anonymous = await send(device, route)
    if (route.auth === 'open') {
      const expected = REFUSED_WHEN_PERSONALISED[key]
      if (expected !== undefined) t.equal(anonymous.status, expected, `${name}, no token → ${expected} (by design)`)
      else notRefused(t, anonymous, `${name}, no token`)
    } else {
      t.equal(anonymous.status, 401, `${name}, no token → 401 once personalised`)
      t.equal(anonymous.json?.error, 'token_required', `${name}, no token: error body`)
    }
    await noAudit(`${name}, invalid, expired or no token`)

    if (route.scopes) await refused(`${name}, wrong scope`, route, 'U', wrongScopeFor(route))
    for (const scope of UNKNOWN_SCOPES) {
      const what = `${name}, unknown scope ${scope}`
      if (route.scopes) await refused(what, route, 'U', scope)
      else if (route.auth !== 'open' && !DISRUPTIVE.has(key)) {
        notRefused(t, await send(device, route, token('U', scope)), what)
        await noAudit(what)
      }
    }

    const roles = route.roles ?? ALL
    for (const role of LOGIN_ROLES.filter((r) => !roles.includes(r))) {
      await refused(`${name}, role ${role} with a right scope`, route, role, rightScopesFor(route)[0]!)
    }

    if (DISRUPTIVE.has(key)) continue
    for (const role of LOGIN_ROLES.filter((r) => roles.includes(r))) {
      for (const scope of rightScopesFor(route)) {
        const answer = await send(device, route, token(role, scope))
        const what = `${name}, ${role} ${route.scopes ? 'right scope' : 'any scope'} ${scope}`
        const expected = route.auth === 'open' ? REFUSED_WHEN_PERSONALISED[key] : undefined
        if (expected !== undefined) t.equal(answer.status, expected, `${what} → ${expected} (by design)`)
        else notRefused(t, answer, what)
        await noAudit(what)
        await journaledAs(t, device, route, answer, what)
      }
    }
  }

  await sendSimCommand(device.dataDir, { action: 'temperature', celsius: 95 })
  const failed = await eventually(async () => (await call(`${device.httpUrl}/api/system/status`)).json.fls_state === 4)
  t.ok(failed, `${variant}: in a fail state (0x04, a temperature fault)`)
  for (const route of routeTable.filter((r) => r.healthy && r.variants.includes(variant))) {
    const name = `${variant} ${keyOf(route)}, fail state`
    const roles = route.roles ?? ALL
    const right = rightScopesFor(route)[0]!
    t.equal((await send(device, route, foreign)).status, 401, `${name}, invalid token → 401`)
    if (stateFirst(route)) {
      const callers: [string, string | undefined][] = [
        ['no token', undefined],
        ['wrong scope', token('U', wrongScopeFor(route))],
        ...LOGIN_ROLES.map((role): [string, string] => [`role ${role} with a right scope`, token(role, right)]),
      ]
      for (const [label, callerToken] of callers) {
        const answer = await send(device, route, callerToken)
        t.equal(answer.status, 409, `${name}, ${label} → 409`)
        t.equal(answer.json?.error, 'device_fault', `${name}, ${label}: error body`)
        t.same(await recordsOf(device, answer), [], `${name}, ${label}: nothing journaled`)
      }
      if (isKeyRoute(route))
        t.equal((await send(device, route, undefined, true)).status, 418, `${name}, plain HTTP → 418`)
      await noAudit(`${name}, every caller`)
      continue
    }
    // Storage and attestation: the seed's order.
    t.equal((await send(device, route)).status, 401, `${name}, no token → 401`)
    if (route.scopes) await refused(`${name}, wrong scope`, route, 'U', wrongScopeFor(route))
    for (const role of LOGIN_ROLES) {
      if (!roles.includes(role)) await refused(`${name}, role ${role}`, route, role, right)
      else t.equal((await send(device, route, token(role, right))).status, 409, `${name}, ${role} right scope → 409`)
    }
  }
}

/** A fresh device, no token: only what the contract allows works; an invalid token is refused everywhere. */
async function freshDevice(t: Test, dir: string, variant: Variant): Promise<void> {
  const device = await bootDevice(t, { dataDir: `${dir}/${variant}`, variant })
  t.equal((await call(`${device.httpUrl}/api/system/status`)).json.inited, false, 'fresh')
  const garbage = [
    'eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9',
    'eyJzY29wZSI6InN5c3RlbTpjb25maWciLCJzdWIiOiJVIn0',
    'c2lnbmF0dXJl',
  ].join('.')
  for (const route of routeTable) {
    const key = keyOf(route)
    const name = `fresh ${variant} ${key}`
    if (!route.variants.includes(variant)) {
      if (!servedOn(variant, route)) t.equal((await send(device, route)).status, 404, `${name}: other variant → 404`)
      continue
    }
    t.equal((await send(device, route, garbage)).status, 401, `${name}, invalid token → 401`)
    if (route.tls === 'required') {
      t.equal((await send(device, route, garbage, true)).status, 401, `${name}, invalid token over HTTP → 401`)
      t.equal((await send(device, route, undefined, true)).status, 418, `${name}, no token over HTTP → 418`)
    }
    const answer = await send(device, route)
    // No owner, no key: a key or ext route's 409 comes before the missing token's 401 (crypto-contract §0).
    const expected = FRESH_WITHOUT_TOKEN[key] ?? (stateFirst(route) ? 409 : route.auth === 'token' ? 401 : undefined)
    if (expected !== undefined)
      t.equal(answer.status, expected, `${name}, no token → ${expected} (got ${answer.text.slice(0, 120)})`)
    else notRefused(t, answer, `${name}, no token`)
  }
  t.equal((await scopeRecords(device)).length, 0, `fresh ${variant}: no FAILED_SCOPE_CHECK`)
  t.equal((await call(`${device.httpUrl}/api/system/status`)).json.inited, false, 'still fresh')
}

t.test('the route table is what this matrix assumes', async (t) => {
  for (const route of routeTable) {
    const key = keyOf(route)
    t.ok(route.variants.length > 0, `${key}: a variant`)
    if (route.auth === 'open') t.notOk(route.scopes ?? route.roles, `${key}: an open route lists no scopes or roles`)
    if (route.scopes) t.ok(route.scopes.length > 0, `${key}: scopes, when given, are not empty`)
    t.equal(
      route.tls === 'required',
      isKeyRoute(route) || isBackupRoute(route),
      `${key}: HTTPS only exactly if a key, crypto or backup route`,
    )
    if (stateFirst(route)) t.ok(route.healthy, `${key}: a key or ext route is fail-state gated`)
    t.equal(route.unreadyFirst === true, isExtRoute(route), `${key}: the state first, without a 418, exactly if ext`)
    const operation = /^\/api\/crypto\//.test(route.path) || route.path === '/api/keymgmt/derive'
    t.equal(keyOf(route) in OPERATION_LOG, operation, `${key}: an operation's LOG_TYPE is known exactly if it is one`)
  }
  for (const key of [...DISRUPTIVE, ...Object.keys(REFUSED_WHEN_PERSONALISED), ...Object.keys(FRESH_WITHOUT_TOKEN)]) {
    t.ok(
      routeTable.some((r) => keyOf(r) === key),
      `${key} is still a route`,
    )
  }
})

t.test('fresh devices without a token', async (t) => {
  const dir = newDir('fresh')
  await Promise.all([freshDevice(t, dir, 'P'), freshDevice(t, dir, 'E')])
})

t.test(
  'personalised P and E: every route × no / invalid / expired / wrong / unknown-scope / wrong-role / right-scope token',
  async (t) => {
    const dir = newDir('personalised')
    const [p, e] = await Promise.all([personalisedDevice(t, dir, 'P'), personalisedDevice(t, dir, 'E')])
    const anyToken = (d: Personalised) => d.tokens.get(`U ${WRONG_SCOPE_CANDIDATES[0]}`)!
    // Each device's tokens are well-formed but invalid on the other: secrets are per device and boot.
    await Promise.all([matrix(t, p, anyToken(e)), matrix(t, e, anyToken(p))])
  },
)
