// Contract §1.4, §1.5 and §1.6 on a real device: ext/request seals the scope for each paired authenticator, ext/token
// exchanges the phone's authreply for an ExtAuth bearer once, with the contract's clamps of its lifetime and scope,
// its statuses and journal records, and the pace of the passphrase logins. The test plays the phone and the broker.
import t, { type Test } from 'tap'
import { hostClock } from '../hal/sim/host-clock.js'
import type { Clock } from '../hal/types.js'
import {
  EXT_JWT_APP_HEADER,
  extAuthKid,
  extAuthSub,
  extJwtSigned,
  fromBase64,
  parseExtJwt,
  sealScope,
  signExtJwt,
  toBase64,
  x25519Agree,
  x25519PublicKey,
} from '../protocol/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, loginAnswer, owned } from './helpers/owner.js'
import {
  authreply,
  brokerKey,
  newPhone,
  openedScope,
  pair,
  payloadOf,
  phoneSecret,
  post,
  type Phone,
} from './helpers/ext-phone.js'

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'))
const nowS = () => Math.floor(Date.now() / 1000)
const ask = (base: string, body: Record<string, unknown>) => post(base, 'request', { epk: brokerKey().epk, ...body })
const exchange = (base: string, reply: string) => post(base, 'token', { authreply: reply })

t.test('ext/request: the authreq, sealed once per pairing', async (t) => {
  const { base, device } = await owned(t)
  const broker = brokerKey()
  const before = (await readJournal(device.dataDir)).records.length
  const none = await post(base, 'request', { epk: broker.epk, scope: 'system:config', exp: nowS() + 120, extra: 1 })
  t.equal(none.status, 200, 'no pairing, unknown keys ignored: 200')
  t.equal(none.json.epk, broker.epk, 'the epk as sent')
  const parsed = parseExtJwt(none.json.authreq)
  const eid = parsed.payload.iss as string
  t.ok(extJwtSigned(parsed, x25519Agree(broker.prv, fromBase64(eid))), 'signed with S_db')
  t.same(Object.keys(parsed.payload), ['iss', 'aud', 'iat', 'exp', 'jti', 'scope'], 'the firmware order')
  const { iat, exp, jti, scope, aud } = parsed.payload as Record<string, any>
  t.match({ aud, scope, lifetime: exp - iat }, { aud: broker.epk, scope: {}, lifetime: 3600 }, 'for an hour')
  t.equal(Buffer.from(fromBase64(jti)).readUInt32LE(0), iat, 'a timed jti')
  for (const [body, what] of [
    [{ scope: '' }, 'an empty scope'],
    [{ scope: 'x'.repeat(1024) }, 'a scope of 1024 bytes'],
    [{ scope: 'é'.repeat(512) }, 'a scope of 1024 bytes in 512 characters'],
    [{ scope: 's', exp: 'soon' }, 'exp not a number'],
    [{ scope: 's', ctx: '' }, 'an empty ctx'],
    [{ scope: 's', note: 'n'.repeat(129) }, 'a note of 129'],
    [{ scope: 's', epk: 'AAAA' }, 'a short epk'],
  ] as const)
    t.equal((await ask(base, body)).status, 400, `${what}: 400`)

  const user = await login(base, 'auth:ext:pair')
  const phones = [newPhone(), newPhone()]
  for (const phone of phones) await pair(base, user, phone)
  const sealed = await ask(base, { scope: 'system:config', ctx: 'c', note: 'n' })
  const payload = payloadOf(sealed.json.authreq) as Record<string, any>
  t.same(Object.keys(payload.scope).sort(), phones.map((p) => p.pid).sort(), 'one entry per pid')
  for (const phone of phones) t.equal(openedScope(phone, sealed.json.authreq), 'system:config', 'each opens it')
  t.match(payload, { ctx: 'c', note: 'n' }, 'ctx and note carried')

  // keymgmt:use:<kid> of a stored key: 900 s, and the key named for the app (its type word and label).
  const kid = extAuthKid(fromBase64(phones[0]!.aid))
  const use = payloadOf((await ask(base, { scope: `keymgmt:use:${kid}` })).json.authreq) as Record<string, any>
  t.equal(use.exp - use.iat, 900, 'keymgmt:use: 900 s')
  const [scopeText, hint] = openedScope(
    phones[0]!,
    (await ask(base, { scope: `keymgmt:use:${kid}` })).json.authreq,
  )!.split('#')
  t.equal(scopeText, `keymgmt:use:${kid}`)
  t.same(JSON.parse(Buffer.from(hint!, 'base64').toString()), { t: '9820', l: 'Pixel 8 (Android)' }, 'the key hint')
  const unknown = `keymgmt:use:${'0'.repeat(32)}`
  t.equal(openedScope(phones[0]!, (await ask(base, { scope: unknown })).json.authreq), unknown, 'no such key: no hint')
  const { records } = await readJournal(device.dataDir)
  t.equal(
    records.length - before,
    records.filter((r) => r.type === LogType.KEY_IMPORT || r.type === LogType.AUTH_PAIRED_EXTERNAL).length +
      records.filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'key').length +
      records.filter((r) => r.type === LogType.AUTH_SUCCESS_INTERNAL).length,
    'no record of any request: only the login and the pairings',
  )
})

/** An owned device with one phone paired; its KID and the bearer `sub` it gives. */
async function paired(t: Test, clock?: Clock) {
  const o = await owned(t, clock ? { boot: { clock } } : {})
  const phone = newPhone()
  const answer = await pair(o.base, await login(o.base, 'auth:ext:pair'), phone)
  if (answer.status !== 200) throw new Error(`pairing: ${answer.status} ${answer.text}`)
  return { ...o, phone, kid: answer.json.kid as string }
}

t.test('ext/token: the approval for a bearer, once, its scope and lifetime clamped', async (t) => {
  const { base, https, device, phone, kid } = await paired(t)
  const sub = extAuthSub(kid)
  const capped = await ask(base, { scope: 'system:config', exp: nowS() + 120 })
  const reply = authreply(phone, capped.json.authreq)
  const granted = await exchange(base, reply)
  t.equal(granted.status, 200, 'T-6.1: a token')
  const claims = claimsOf(granted.json.token)
  t.match(claims, { scope: 'system:config', sub }, 'sub = base64 of the KID bytes, the scope asked')
  t.equal(sub.length, 24)
  t.ok(claims.exp <= nowS() + 120 && claims.exp > nowS() + 100, 'exp at most the ext/request body exp')
  t.equal((await call(`${base}/api/system/config`, { headers: bearer(granted.json.token) })).status, 200, 'it opens')
  t.equal((await exchange(base, reply)).status, 401, 'the same authreply again: 401')

  const day = await exchange(
    base,
    authreply(phone, (await ask(base, { scope: 'logger:get' })).json.authreq, {
      exp: nowS() + 3 * 86400,
    }),
  )
  const dayClaims = claimsOf(day.json.token)
  t.notOk('ctx' in dayClaims, 'no ctx: none in the bearer')
  const withCtx = authreply(phone, (await ask(base, { scope: 'logger:get' })).json.authreq, { ctx: 'phone-ctx' })
  t.equal(claimsOf((await exchange(base, withCtx)).json.token).ctx, 'phone-ctx', 'the authreply ctx copied')
  t.equal(dayClaims.exp - dayClaims.iat, 86400, 'an exp of three days: one')
  const none = await exchange(
    base,
    authreply(phone, (await ask(base, { scope: 'logger:get' })).json.authreq, { exp: 0 }),
  )
  t.equal(claimsOf(none.json.token).exp - claimsOf(none.json.token).iat, 8 * 3600, 'exp 0: eight hours')
  const late = authreply(phone, (await ask(base, { scope: 'logger:get' })).json.authreq, { exp: nowS() - 1 })
  t.equal((await exchange(base, late)).status, 401, 'an authreply exp not after now: 401')

  const disk = (await ask(base, { scope: 'storage:disk0' })).json.authreq
  const rw = await exchange(base, authreply(phone, disk, { grant: (s) => `${s}:rw` }))
  t.equal(claimsOf(rw.json.token).scope, 'storage:disk0:rw', 'storage: the write switch on')
  const rwAsked = (await ask(base, { scope: 'storage:disk1:rw' })).json.authreq
  const ro = await exchange(base, authreply(phone, rwAsked, { grant: (s) => s.replace(/:rw$/, '') }))
  t.equal(claimsOf(ro.json.token).scope, 'storage:disk1', 'and off')
  const config = (await ask(base, { scope: 'system:config' })).json.authreq
  t.equal(
    (await exchange(base, authreply(phone, config, { grant: (s) => `${s}:rw` }))).status,
    406,
    ':rw elsewhere: 406',
  )
  const other = (await ask(base, { scope: 'system:config' })).json.authreq
  t.equal(
    (await exchange(base, authreply(phone, other, { grant: () => 'system:upgrade' }))).status,
    406,
    'another: 406',
  )

  // Another device's eid: signed with the S_pair the phone has with it, for it.
  const elsewhere = toBase64(x25519PublicKey(new Uint8Array(32).fill(7)))
  const foreign = authreply(phone, (await ask(base, { scope: 'logger:get' })).json.authreq, { eid: elsewhere })
  t.equal((await exchange(base, foreign)).status, 401, "an authreply for another device's eid: 401")
  const asked = (await ask(base, { scope: 'logger:get' })).json.authreq
  t.equal((await exchange(base, signedBy(newPhone(), phone.pid, asked))).status, 406, 'an iss not the pid key: 406')
  t.equal((await exchange(base, signedBy(phone, newPhone().pid, asked))).status, 406, 'an unknown pid: 406')
  t.equal((await exchange(base, 'x.y.z')).status, 401, 'not an eJWT: 401')
  t.equal((await post(base, 'token', '{"authreply": 1}')).status, 400, 'not a string: 400')

  // Unpaired through keymgmt: no longer sealed for, and its replies refused.
  const pending = (await ask(base, { scope: 'logger:get' })).json.authreq
  const del = await call(`${https}/api/keymgmt/delete/${kid}`, {
    method: 'DELETE',
    headers: bearer(await login(base, 'keymgmt:del')),
  })
  t.equal(del.status, 200, 'keymgmt/delete of the pairing')
  t.equal((await exchange(base, authreply(phone, pending))).status, 406, 'its reply after the unpairing: 406')
  t.same(payloadOf((await ask(base, { scope: 'logger:get' })).json.authreq).scope, {}, 'no longer sealed for')

  const { records } = await readJournal(device.dataDir)
  const external = records.filter((r) => r.type === LogType.AUTH_SUCCESS_EXTERNAL)
  t.match(
    external.find((r) => r.result === LogResult.OK),
    { subject: sub, decoded: { source: 200, kid, scope: 'system:config' } },
    'AUTH_SUCCESS_EXTERNAL OK: the new sub, the KID and scope',
  )
  t.ok(
    external.some((r) => r.result === LogResult.FAILED && r.decoded?.source === 401),
    'a 401 journaled FAILED',
  )
  t.ok(
    external.some((r) => r.result === LogResult.FAILED && r.decoded?.source === 406),
    'a 406 journaled FAILED',
  )
  t.notOk(JSON.stringify(records.map((r) => r.decoded)).includes(reply.split('.')[2]!), 'no authreply journaled')
})

/** An authreply of `phone` (its own aid and S_pair) under `pid`, its scope sealed under its own K. */
function signedBy(phone: Phone, pid: string, authreq: string): string {
  const { iss, jti } = payloadOf(authreq) as { iss: string; jti: string }
  const sPair = phoneSecret(phone, iss)
  const now = nowS()
  const claims = {
    aud: iss,
    jti,
    exp: now + 900,
    iat: now,
    pid,
    iss: phone.aid,
    scope: sealScope('logger:get', sPair, fromBase64(jti)),
  }
  return signExtJwt(claims, sPair, EXT_JWT_APP_HEADER)
}

/** The host's clock but for its monotonic time, which only the device's sleeps move (see login.test.ts). */
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

t.test('ext/token: the answer floor of the logins, its failures counted with theirs', async (t) => {
  const clock = heldClock()
  const { base, phone } = await paired(t, clock)
  const timed = async (request: () => Promise<Answer>) => {
    const started = clock.monotonic()
    const answer = await request()
    return { status: answer.status, ms: clock.monotonic() - started }
  }
  const granted = await timed(async () =>
    exchange(base, authreply(phone, (await ask(base, { scope: 'x' })).json.authreq)),
  )
  t.equal(granted.status, 200)
  t.ok(granted.ms >= 500, `a token takes ≥ 500 ms (${granted.ms})`)
  for (let i = 1; i <= 3; i++) {
    const refused = await timed(() => exchange(base, 'x.y.z'))
    t.equal(refused.status, 401)
    t.ok(refused.ms >= 500, `refusal ${i}: ≥ 500 ms (${refused.ms})`)
  }
  const password = await timed(() => loginAnswer(base, 'system:config'))
  t.equal(password.status, 200, 'then a passphrase login')
  t.ok(password.ms >= 1500, `after 3 ext refusals: ≥ 1500 ms (${password.ms})`)
})
