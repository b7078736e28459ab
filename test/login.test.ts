// Login end to end: the eJWT challenge of several clients, its refusals, the brute-force brake,
// and what bearer tokens open (and do not) on a running device.
import { hostClock } from '../hal/sim/host-clock.js'
import { simulatedClock, skippingClock } from './helpers/clock.js'
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { LoginQueue } from '../actors/auth/login-queue.js'
import type { CommandReply } from '../protocol/bus-messages.js'
import type { PassphraseKey } from '../client/index.js'
import { buildEjwt } from '../client/ejwt-builder.js'
import { LogResult, LogType } from '../protocol/journal.js'
import type { Clock } from '../hal/types.js'
import { b64 } from './helpers/base64.js'
import { bootDevice } from './helpers/device.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { MASTER_PASS, USER_PASS, bearer, keys, login, loginAnswer, owned, personalise } from './helpers/owner.js'

const json = { 'content-type': 'application/json' }

/** The skipping clock (the brake's waits pass at once), with its wall time in seconds, as the claims carry it. */
function steerableClock(): Clock & { advance(ms: number): void; seconds(): number } {
  const clock = skippingClock()
  return { ...clock, seconds: () => Math.floor(clock.now() / 1000) }
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>
}

function headerOf(token: string): string {
  return Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')
}

interface Challenge {
  exp: number
  spk: string
  jti: string
  lbl: string
  eid: string
}

async function challengeOf(base: string): Promise<Challenge> {
  const answer = await call(`${base}/api/auth/token`)
  if (answer.status !== 200) throw new Error(`no challenge: ${answer.status} ${answer.text}`)
  return answer.json as Challenge
}

const postToken = (base: string, body: string) =>
  call(`${base}/api/auth/token`, { method: 'POST', headers: json, body })
const postAuth = (base: string, auth: unknown) => postToken(base, JSON.stringify({ auth }))

/** A login eJWT for `challenge`, with claims overridable one by one. */
function loginEjwt(
  key: PassphraseKey,
  challenge: Challenge,
  now: number,
  patch: Record<string, unknown> = {},
  seed = key.seed,
): string {
  return buildEjwt({
    seed,
    spk: challenge.spk,
    claims: {
      jti: challenge.jti,
      aud: challenge.spk,
      exp: now + 3600,
      iat: now,
      iss: b64(key.publicKey),
      scope: 'system:config',
      ...patch,
    },
  })
}

/**
 * The host's clock, but for its monotonic time, which only the device's sleeps move (they pass at
 * once): an answer's time on it is what the device held it back, whatever the host's load.
 */
function heldClock(): Clock {
  let held = 0
  return {
    ...hostClock,
    monotonic: () => held,
    sleep(ms) {
      held += Math.max(0, ms)
      return new Promise((resolve) => setImmediate(resolve))
    },
  }
}

/** How long the answer took on the device's own clock. */
async function timed(clock: Clock, request: () => Promise<Answer>): Promise<Answer & { ms: number }> {
  const started = clock.monotonic()
  const answer = await request()
  return { ...answer, ms: clock.monotonic() - started }
}

// t.testdir() empties the test's directory each time it is called: one call per test, a subdirectory per device.
const roots = new WeakMap<Test, string>()
let devices = 0
function freshDataDir(t: Test): string {
  let root = roots.get(t)
  if (root === undefined) roots.set(t, (root = t.testdir()))
  return join(root, `device-${++devices}`)
}

/** A personalised E device (the fast one), with its user and master keys. */
const ownedDevice = (t: Test, boot: { clock?: Clock } = {}) => owned(t, { dataDir: freshDataDir(t), boot })

t.test(
  'the challenge: 409 before personalisation, then {exp, spk, jti, lbl, eid} with lbl = the configured user',
  async (t) => {
    const device = await bootDevice(t, { dataDir: freshDataDir(t), variant: 'E' })
    const base = device.httpUrl!
    const before = await call(`${base}/api/auth/token`)
    t.equal(before.status, 409, 'no login before personalisation')
    t.equal(before.json.error, 'not_personalised')
    t.equal((await postAuth(base, 'a.b.c')).status, 409, 'nor a login attempt')

    const initChallenge = (await call(`${base}/api/auth/init`)).json
    t.equal((await personalise(base, 'E', { user: 'Grace Hopper' })).status, 200)
    const earliest = Math.floor(Date.now() / 1000)
    const challenge = await challengeOf(base)
    const latest = Math.ceil(Date.now() / 1000)
    t.match(challenge, { spk: /^[A-Za-z0-9+/]{43}=$/, jti: /^[A-Za-z0-9+/]{43}=$/, eid: /^[A-Za-z0-9+/]{43}=$/ })
    t.equal(challenge.lbl, 'Grace Hopper', 'lbl is the configured user name')
    t.equal(challenge.eid, initChallenge.eid, 'the device identity key')
    t.equal(challenge.spk, initChallenge.spk, 'one session key per boot')
    t.ok(challenge.exp >= earliest + 60 && challenge.exp <= latest + 60, `exp = now + 60 (${challenge.exp - earliest})`)
    const jti = Buffer.from(challenge.jti, 'base64').readUInt32LE(0)
    t.ok(jti >= earliest && jti <= latest, 'jti bytes 0-3: the time, little-endian')
    const next = await challengeOf(base)
    t.not(next.jti, challenge.jti, 'a new jti each time')
    t.equal(next.spk, challenge.spk)
  },
)

t.test('E: the login quirks of several clients; U and M subjects; journaled without the token', async (t) => {
  const { device, base, user, master } = await ownedDevice(t)

  // A jti with a `/` in it, so that the `\/` escapes below are really exercised.
  let challenge = await challengeOf(base)
  for (let i = 0; i < 60 && !challenge.jti.includes('/'); i++) challenge = await challengeOf(base)
  t.ok(challenge.jti.includes('/'), 'a jti that needs escaping')
  const esc = (s: string) => s.replace(/\//g, '\\/')
  const scope = 'keymgmt:use:0123456789abcdef0123456789abcdef'
  const iat = Math.floor(Date.now() / 1000) - 4
  const payloadJson =
    `{"scope":"${scope}","iss":"${esc(b64(user.publicKey))}","iat":${iat},"exp":${challenge.exp},` +
    `"aud":"${esc(challenge.spk)}","jti":"${esc(challenge.jti)}"}`
  t.match(payloadJson, /\\\//, 'the payload carries `\\/` escapes')
  const auth = buildEjwt({
    seed: user.seed,
    spk: challenge.spk,
    payloadJson,
    headerJson: '{"typ":"JWT","alg":"HS256","ecdh":"x25519"}',
  })
  const before = Math.floor(Date.now() / 1000)
  const answer = await postAuth(base, auth)
  const after = Math.ceil(Date.now() / 1000)
  t.equal(answer.status, 200, answer.status === 200 ? 'accepted' : answer.text)
  const userToken = answer.json.token as string
  t.match(userToken, /^[\w-]+\.[\w-]+\.[\w-]+$/)
  t.same(JSON.parse(headerOf(userToken)), { typ: 'JWT', alg: 'EdDSA' })
  const claims = claimsOf(userToken)
  t.match(claims, { scope, sub: 'U', jti: String, iat: Number })
  t.equal(claims.exp, challenge.exp, 'exp = the exp asked for, here the challenge exp')
  t.ok((claims.iat as number) >= before && (claims.iat as number) <= after, 'iat is the device time')

  // Another client: the header in yet another order, keys ascending, iat a second ago.
  const second = await challengeOf(base)
  const masterAuth = buildEjwt({
    seed: master.seed,
    spk: second.spk,
    headerJson: '{"alg":"HS256","ecdh":"x25519","typ":"JWT"}',
    payloadJson: JSON.stringify({
      aud: second.spk,
      exp: second.exp + 600,
      iat: Math.floor(Date.now() / 1000) - 1,
      iss: b64(master.publicKey),
      jti: second.jti,
      scope: 'system:config',
    }),
  })
  const masterAnswer = await postAuth(base, masterAuth)
  t.equal(masterAnswer.status, 200, masterAnswer.status === 200 ? 'accepted' : masterAnswer.text)
  const masterToken = masterAnswer.json.token as string
  t.match(claimsOf(masterToken), { sub: 'M', scope: 'system:config', exp: second.exp + 600 })
  const config = await call(`${base}/api/system/config`, { headers: bearer(masterToken) })
  t.equal(config.status, 200, 'the master token opens what its scope names')

  // An exp far beyond the device's bound is clamped (24 h).
  const long = await loginAnswer(base, 'logger:get', USER_PASS, Math.floor(Date.now() / 1000) + 10 * 24 * 3600)
  t.equal(long.status, 200)
  const longClaims = claimsOf(long.json.token)
  t.equal((longClaims.exp as number) - (longClaims.iat as number), 24 * 3600, 'exp bounded by the device')

  const { files, records } = await readJournal(device.dataDir)
  const successes = records.filter((r) => r.type === LogType.AUTH_SUCCESS_INTERNAL)
  t.same(
    successes.map((r) => [r.subject, r.result, r.decoded?.source, r.decoded?.scope]),
    [
      ['U', LogResult.OK, 200, scope],
      ['M', LogResult.OK, 200, 'system:config'],
      ['U', LogResult.OK, 200, 'logger:get'],
    ],
  )
  const everything = Buffer.concat(files.map((f) => f.bytes)).toString('utf8')
  for (const token of [userToken, masterToken, long.json.token as string]) {
    const [, payload, mac] = token.split('.')
    t.notOk(everything.includes(mac!) || everything.includes(payload!), 'no token (nor its parts) in the journal')
  }
  t.notMatch(
    JSON.stringify(successes.map((r) => r.decoded)),
    /token|auth|iss|ey[A-Za-z0-9_-]{10}/,
    'no token-like data in the records',
  )
})

t.test('refusals: replay, expired and unknown challenges, wrong keys, wrong aud, malformed bodies', async (t) => {
  const clock = steerableClock()
  const { base, user } = await ownedDevice(t, { clock })

  const t1 = await challengeOf(base)
  const good = loginEjwt(user, t1, clock.seconds())
  t.equal((await postAuth(base, good)).status, 200, 'first use')
  t.equal((await postAuth(base, good)).status, 401, 'the same eJWT again')
  t.equal(
    (await postAuth(base, loginEjwt(user, t1, clock.seconds(), { scope: 'logger:get' }))).status,
    401,
    'a new eJWT on a used challenge',
  )

  const unknown = { ...(await challengeOf(base)), jti: b64(randomBytes(32)) }
  t.equal(
    (await postAuth(base, loginEjwt(user, unknown, clock.seconds()))).status,
    401,
    'a jti the device never issued',
  )

  const wrong = await keys.get('not the passphrase', t1.eid)
  // Each on a fresh challenge, so that the flaw under test is the only one.
  const refuse = async (what: string, key: PassphraseKey, patch: Record<string, unknown> = {}, seed?: Uint8Array) => {
    const challenge = await challengeOf(base)
    t.equal((await postAuth(base, loginEjwt(key, challenge, clock.seconds(), patch, seed))).status, 401, what)
  }
  await refuse('a key the device does not know (wrong passphrase)', wrong)
  await refuse('the user key named, signed with another', user, {}, wrong.seed)
  await refuse('wrong aud', user, { aud: b64(randomBytes(32)) })
  await refuse('iat long past', user, { iat: clock.seconds() - 600 })
  await refuse('iat in the future', user, { iat: clock.seconds() + 30 })
  await refuse('exp past', user, { exp: clock.seconds() - 5 })

  // Expiry of the challenge itself: the eJWT is otherwise fine (fresh iat, far exp).
  const t3 = await challengeOf(base)
  const t4 = await challengeOf(base)
  clock.advance(61_000)
  t.equal((await postAuth(base, loginEjwt(user, t3, clock.seconds()))).status, 401, 'a challenge older than 60 s')
  t.equal(
    (await postAuth(base, loginEjwt(user, t4, clock.seconds(), { exp: t4.exp }))).status,
    401,
    'exp = the expired challenge exp',
  )
  const before = clock.seconds()
  const t5 = await challengeOf(base)
  t.ok(t5.exp >= before + 60 && t5.exp <= clock.seconds() + 60, 'challenges follow the device clock')
  t.equal(
    (await postAuth(base, loginEjwt(user, t5, clock.seconds(), { exp: t5.exp }))).status,
    200,
    'a fresh challenge works',
  )
  const t6 = await challengeOf(base)
  clock.advance(t6.exp * 1000 - clock.now())
  t.equal((await postAuth(base, loginEjwt(user, t6, clock.seconds()))).status, 200, 'still live at exactly exp')

  // Malformed bodies: 400.
  t.equal((await postToken(base, 'this is not json')).status, 400, 'not JSON')
  t.equal((await postToken(base, '[1,2]')).status, 400, 'not an object')
  t.equal((await postToken(base, '{}')).status, 400, 'no auth')
  t.equal((await postToken(base, '{"token":"a.b.c"}')).status, 400, 'auth under another name')
  t.equal((await postAuth(base, 5)).status, 400, 'auth not a string')
  t.equal((await postAuth(base, 'not-a-jwt')).status, 400, 'not a JWT')
  t.equal((await postAuth(base, 'a.b.c')).status, 400, 'three parts of nothing')
  const t7 = await challengeOf(base)
  const badHeader = buildEjwt({
    seed: user.seed,
    spk: t7.spk,
    headerJson: '{"alg":"none","typ":"JWT"}',
    claims: {
      jti: t7.jti,
      aud: t7.spk,
      exp: t7.exp,
      iat: clock.seconds(),
      iss: b64(user.publicKey),
      scope: 'system:config',
    },
  })
  t.equal((await postAuth(base, badHeader)).status, 400, 'not the eJWT header')
  const noScope = buildEjwt({
    seed: user.seed,
    spk: t7.spk,
    claims: { jti: t7.jti, aud: t7.spk, exp: t7.exp, iat: clock.seconds(), iss: b64(user.publicKey) },
  })
  t.equal((await postAuth(base, noScope)).status, 400, 'no scope')
  t.equal(
    (await postAuth(base, loginEjwt(user, t7, clock.seconds()))).status,
    200,
    'and the device still lets its owner in',
  )
})

// Measured on a clock that only the device's own sleeps move (heldClock): what an answer took on it
// is what the brake held it, none of the host's time, so a brake that did not wait would show. Lower
// bounds: the device's pace of checks may hold an answer longer, and parallel holds add up on it.
// Which floor each attempt gets is the brake's decision, on every path in auth-brake.test.ts.
t.test(
  'the brake: every answer ≥ 500 ms, ≥ 1500 ms after 3 failures in a row, ' + 'the owner still let in',
  async (t) => {
    const clock = heldClock()
    const { base, user } = await ownedDevice(t, { clock })
    const wrong = await keys.get('guess 1234', (await challengeOf(base)).eid)
    const attempt = async (key: PassphraseKey) => {
      const challenge = await challengeOf(base)
      const auth = loginEjwt(key, challenge, Math.floor(Date.now() / 1000))
      return timed(clock, () => postAuth(base, auth))
    }

    const ok = await attempt(user)
    t.equal(ok.status, 200)
    t.ok(ok.ms >= 500, `a success takes ≥ 500 ms (${ok.ms.toFixed(0)})`)
    for (let i = 1; i <= 3; i++) {
      const fail = await attempt(wrong)
      t.equal(fail.status, 401)
      t.ok(fail.ms >= 500, `failure ${i} takes ≥ 500 ms (${fail.ms.toFixed(0)})`)
    }
    const slowed = await attempt(wrong)
    t.equal(slowed.status, 401)
    t.ok(slowed.ms >= 1500, `after 3 failures: ≥ 1500 ms (${slowed.ms.toFixed(0)})`)
    const malformed = await timed(clock, () => postAuth(base, 'not-a-jwt'))
    t.equal(malformed.status, 400)
    t.ok(malformed.ms >= 1500, `a malformed eJWT is braked too (${malformed.ms.toFixed(0)})`)
    const success = await attempt(user)
    t.equal(success.status, 200, 'the owner still gets in')
    t.ok(success.ms >= 1500, `...slowly (${success.ms.toFixed(0)})`)
    const afterReset = await attempt(wrong)
    t.equal(afterReset.status, 401)
    t.ok(afterReset.ms >= 500, `after the success: ≥ 500 ms (${afterReset.ms.toFixed(0)})`)

    // Parallel guesses: each held to the client's floor. That they are checked at the device's pace
    // is login-queue.test.ts's, on a simulated clock: here the sleeps of parallel holds add up.
    const challenges = await Promise.all([1, 2, 3, 4].map(() => challengeOf(base)))
    const parallel = await Promise.all(
      challenges.map((c) => timed(clock, () => postAuth(base, loginEjwt(wrong, c, Math.floor(Date.now() / 1000))))),
    )
    t.same(
      parallel.map((p) => p.status),
      [401, 401, 401, 401],
    )
    for (const p of parallel) t.ok(p.ms >= 500, `a parallel guess ≥ 500 ms (${p.ms.toFixed(0)})`)
  },
)

t.test('the brake: an attempt that throws is answered at its floor, and counts as a failure', async (t) => {
  const clock = simulatedClock()
  const queue = new LoginQueue({ clock, now: clock.now })
  /** The attempt's outcome, and how long it took on the simulated clock. */
  const braked = async (attempt: () => Promise<CommandReply>) => {
    const sent = clock.monotonic()
    const outcome = await queue.run('127.0.0.1', undefined, attempt).then(
      (reply) => reply.status,
      (error: unknown) => (error as Error).message,
    )
    return { outcome, ms: clock.monotonic() - sent }
  }
  const attempts = (async () => {
    for (let i = 1; i <= 3; i++) {
      const thrown = await braked(async () => Promise.reject(new Error('the journal is closed')))
      t.same(thrown, { outcome: 'the journal is closed', ms: 501 }, `thrown ${i}: rejected, held to 500 ms`)
      t.equal(queue.floor('127.0.0.1'), i < 3 ? 500 : 1500, `${i} thrown: ${i} failures`)
    }
    const next = await braked(async () => ({ status: 200 }))
    t.same(next, { outcome: 200, ms: 1501 }, 'the next attempt is slowed')
    t.equal(queue.floor('127.0.0.1'), 500, 'and its success resets the brake')
  })()
  await clock.run(60_000)
  await attempts
})

t.test('the brake holds for malformed bodies too: the auth actor answers them', async (t) => {
  const clock = heldClock()
  const { base } = await ownedDevice(t, { clock })
  for (const [what, body] of [
    ['not JSON', 'this is not json'],
    ['no auth', '{}'],
    ['auth not a string', '{"auth":5}'],
  ] as const) {
    const answer = await timed(clock, () => postToken(base, body))
    t.equal(answer.status, 400, what)
    t.ok(answer.ms >= 500, `${what}: ≥ 500 ms (${answer.ms.toFixed(0)})`)
  }
})

t.test('bearer tokens: invalid, expired and foreign ones are 401 everywhere; wrong scope 403', async (t) => {
  const clock = steerableClock()
  const { device, base } = await ownedDevice(t, { clock })
  const other = await ownedDevice(t)

  const token = await login(base, 'system:config', USER_PASS, clock.seconds() + 3600)
  const foreign = await login(other.base, 'system:config')
  const [h, p, s] = token.split('.') as [string, string, string]
  const forgedPayload = Buffer.from(JSON.stringify({ ...claimsOf(token), scope: 'keymgmt:gen' })).toString('base64url')
  const forged = `${h}.${forgedPayload}.${s}`
  const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BA' : 'AA'}`
  const invalid: [string, Record<string, string>][] = [
    ['garbage', { authorization: 'Bearer garbage' }],
    ['another device', bearer(foreign)],
    ['a forged payload', bearer(forged)],
    ['a flipped MAC', bearer(flipped)],
    ['not a bearer', { authorization: `Basic ${Buffer.from('ada:pw').toString('base64')}` }],
    ['empty bearer', { authorization: 'Bearer ' }],
  ]
  for (const path of ['/api/system/status', '/api/system/version', '/api/system/config', '/api/auth/token']) {
    t.equal((await call(`${base}${path}`, { headers: bearer(token) })).status, 200, `${path}: a valid token`)
    for (const [what, headers] of invalid)
      t.equal((await call(`${base}${path}`, { headers })).status, 401, `${path}: ${what}`)
  }
  t.equal((await call(`${base}/api/system/config`)).status, 401, 'no token where one is needed')
  t.equal(
    (await call(`${other.base}/api/system/config`, { headers: bearer(token) })).status,
    401,
    'ours is foreign there too',
  )

  // Expiry on the device clock (the gateway's cache included).
  const short = await login(base, 'system:config', USER_PASS, clock.seconds() + 30)
  const shortExp = claimsOf(short).exp as number
  t.equal((await call(`${base}/api/system/status`, { headers: bearer(short) })).status, 200, 'valid (and now cached)')
  clock.advance(shortExp * 1000 - clock.now() - 5000)
  t.equal((await call(`${base}/api/system/version`, { headers: bearer(short) })).status, 200, 'valid 5 s before exp')
  clock.advance(shortExp * 1000 - clock.now())
  for (const path of ['/api/system/status', '/api/system/version', '/api/system/config']) {
    t.equal((await call(`${base}${path}`, { headers: bearer(short) })).status, 401, `${path}: expired`)
  }
  t.equal(
    (await call(`${base}/api/system/config`, { headers: bearer(token) })).status,
    200,
    'the long token still works',
  )

  // Scope: one per token, matched by prefix; a wrong one is 403 and audited.
  const keylist = await login(base, 'keymgmt:list', USER_PASS, clock.seconds() + 3600)
  const denied = await call(`${base}/api/system/config`, { headers: bearer(keylist) })
  t.equal(denied.status, 403, 'a token of another scope')
  t.equal(
    (
      await call(`${base}/api/system/reboot`, {
        headers: bearer(await login(base, 'system:shutdown', USER_PASS, clock.seconds() + 3600)),
      })
    ).status,
    403,
    'shutdown scope cannot reboot',
  )
  t.equal(
    (await call(`${base}/api/system/status`, { headers: bearer(keylist) })).status,
    200,
    'any valid token on an open route',
  )
  const { records } = await readJournal(device.dataDir)
  const scopeFailures = records.filter((r) => r.type === LogType.FAILED_SCOPE_CHECK)
  t.same(
    scopeFailures.map((r) => [r.result, r.subject, r.decoded?.source, r.decoded?.scope]),
    [
      [LogResult.FAILED, 'U', 403, 'keymgmt:list'],
      [LogResult.FAILED, 'U', 403, 'system:shutdown'],
    ],
  )
})

t.test('version: sd_csd and sd_cid with a valid token, on P only', async (t) => {
  const p = await bootDevice(t, { dataDir: freshDataDir(t) })
  t.equal((await personalise(p.httpUrl!, 'P')).status, 200)
  const token = await login(p.httpUrl!, 'logger:get')
  const open = (await call(`${p.httpUrl}/api/system/version`)).json
  t.notOk('sd_csd' in open || 'sd_cid' in open, 'not without a token')
  const withToken = await call(`${p.httpUrl}/api/system/version`, { headers: bearer(token) })
  t.equal(withToken.status, 200)
  t.match(withToken.json, { hwv: /PPA/, sd_csd: /\S/, sd_cid: /\S/ })

  const { base } = await ownedDevice(t)
  const e = await call(`${base}/api/system/version`, { headers: bearer(await login(base, 'logger:get')) })
  t.equal(e.status, 200)
  t.match(e.json, { hwv: /EPA/ })
  t.notOk('sd_csd' in e.json || 'sd_cid' in e.json, 'never on E')
})

t.test('the master passphrase and the user passphrase are told apart', async (t) => {
  const { base } = await ownedDevice(t)
  t.equal(claimsOf(await login(base, 'system:config', MASTER_PASS)).sub, 'M')
  t.equal(claimsOf(await login(base, 'system:config', USER_PASS)).sub, 'U')
  // The brake holds back login answers only: other requests are answered meanwhile.
  const order: string[] = []
  const slow = postAuth(base, 'not-a-jwt').then((a) => (order.push('login'), a))
  const status = call(`${base}/api/system/status`).then((a) => (order.push('status'), a))
  t.equal((await status).status, 200)
  t.equal((await slow).status, 400)
  t.same(order, ['status', 'login'], 'status answered while a login was braked')
})
