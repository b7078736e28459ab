// Contract §1.1–§1.3 and §1.6 on a real device: ext/init, ext/validate and ext/mac, their order of checks, statuses
// and journal records; a pairing kept as a key (at most 8, no duplicate), listed and removed through keymgmt. The
// test plays the phone and the broker with the shared ext-auth core.
import t from 'tap'
import {
  extAuthKid,
  fromBase64,
  hmacSha256,
  parseExtJwt,
  extJwtSigned,
  toBase64,
  x25519Agree,
  EXT_AUTH_MAX_PAIRINGS,
} from '../protocol/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { FLS } from '../protocol/fail-state.js'
import { call } from './helpers/http.js'
import { diagOk, flsShown } from './helpers/diag.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login, MASTER_PASS, owned } from './helpers/owner.js'
import { brokerKey, newPhone, pair, pairingReply, post } from './helpers/ext-phone.js'

const recordsOf = async (dataDir: string, type: number) =>
  (await readJournal(dataDir)).records.filter((r) => r.type === type)

t.test('ext/init: U only, its scopes only, checked in the contract order', async (t) => {
  const { device, base, https } = await owned(t)
  const user = await login(base, 'system:config')
  const broker = brokerKey()

  const answer = await post(base, 'init', { epk: broker.epk }, user)
  t.equal(answer.status, 200, 'T-3.2: a U token of system:config, over HTTP: 200')
  const eid = answer.json.eid as string
  t.equal(fromBase64(eid).length, 32, 'eid: 32 bytes')
  const request = parseExtJwt(answer.json.request)
  t.equal(
    request.signingInput.split('.')[0],
    Buffer.from('{"ecdh":"x25519","typ":"JWT","alg":"HS256"}').toString('base64url'),
  )
  const now = Math.floor(Date.now() / 1000)
  t.match(request.payload, { aud: broker.epk, iss: eid }, 'request: aud = epk, iss = eid')
  t.ok(Math.abs((request.payload.exp as number) - (now + 86400)) <= 5, 'request: exp = now + 24 h')
  t.notOk('iat' in request.payload, 'no iat')
  t.ok(extJwtSigned(request, x25519Agree(broker.prv, fromBase64(eid))), 'signed with S_db')
  t.equal((await post(https, 'init', { epk: broker.epk }, user)).status, 200, 'over HTTPS too')
  t.equal((await post(base, 'init', { epk: broker.epk }, await login(base, 'auth:ext:pair'))).status, 200)

  const master = await login(base, 'system:config', MASTER_PASS)
  const refused = await post(base, 'init', { epk: broker.epk }, master)
  t.equal(refused.status, 403, 'T-3.2: an M token: 403')
  const wrong = await login(base, 'system:wrong')
  t.equal((await post(base, 'init', { epk: broker.epk }, wrong)).status, 403, 'T-5.2: system:wrong: 403')
  const scopeChecks = await recordsOf(device.dataDir, LogType.FAILED_SCOPE_CHECK)
  t.match(
    scopeChecks.map((r) => [r.result, r.decoded?.source, r.decoded?.scope]),
    [
      [LogResult.FAILED, 403, 'system:config'],
      [LogResult.FAILED, 403, 'system:wrong'],
    ],
    'each 403 journaled FAILED_SCOPE_CHECK with the token scope',
  )
  t.equal((await post(base, 'init', { epk: broker.epk })).status, 401, 'no token: 401')
  t.equal((await post(base, 'init', { epk: broker.epk }, `${user}x`)).status, 401, 'a bad token: 401')
  t.equal((await post(base, 'request', { epk: broker.epk, scope: 'x' }, `${user}x`)).status, 401, 'on open routes too')
  t.equal((await post(base, 'init', { epk: 'AAAA' }, user)).status, 400, 'an epk of 3 bytes: 400')
  t.equal(
    (await post(base, 'init', { epk: toBase64(new Uint8Array(32)) }, user)).status,
    400,
    'an all-zero secret: 400',
  )
  t.equal((await post(base, 'init', '{"epk":', user)).status, 400, 'not JSON: 400')
  t.equal((await post(base, 'init', { epk: broker.epk }, wrong)).status, 403, 'the scope before the body')
  t.equal((await post(base, 'nope', { epk: broker.epk }, user)).status, 404, 'another ext path: 404')
  const big = JSON.stringify({ epk: broker.epk, pad: 'x'.repeat(7300) })
  t.equal((await post(base, 'init', big, user)).status, 413, 'a body over 7300 bytes: 413')
  const mac = await post(base, 'mac', { epk: broker.epk }, user)
  t.equal(mac.status, 200, 'ext/mac: 200')
  const sDb = x25519Agree(broker.prv, fromBase64(eid))
  t.equal(mac.json.mac, toBase64(hmacSha256(sDb, fromBase64(mac.json.nonce))), 'mac = HMAC(S_db, nonce)')
  const nonceTime = fromBase64(mac.json.nonce)
    .subarray(0, 4)
    .reduce((n, b, i) => n + b * 256 ** i, 0)
  t.ok(Math.abs(nonceTime - Math.floor(Date.now() / 1000)) <= 5, 'a timed nonce of now')
  t.equal((await post(base, 'mac', { epk: broker.epk }, master)).status, 403, 'ext/mac: M 403')
})

t.test('ext/validate: a pairing is a key, good once, at most eight, no duplicate', async (t) => {
  const { device, base, https } = await owned(t)
  const user = await login(base, 'auth:ext:pair')
  const phone = newPhone()
  const broker = brokerKey()
  const init = await post(base, 'init', { epk: broker.epk }, user)
  const reply = pairingReply(phone, init.json.request, 'Pixel 8 (Android) with a very long model name')
  t.equal((await post(base, 'validate', { pid: 'AAAA', reply }, user)).status, 400, 'a short pid: 400')
  t.equal((await post(base, 'validate', { pid: phone.pid, reply: 'a.b' }, user)).status, 400, 'not a JWT: 400')
  const forged = pairingReply({ ...newPhone(), aid: phone.aid }, init.json.request)
  t.equal((await post(base, 'validate', { pid: phone.pid, reply: forged }, user)).status, 406, 'not signed by iss: 406')
  const master = await login(base, 'system:config', MASTER_PASS)
  t.equal((await post(base, 'validate', { pid: phone.pid, reply }, master)).status, 403, 'M: 403')

  const paired = await post(base, 'validate', { pid: phone.pid, reply }, user)
  t.equal(paired.status, 200, 'the reply: 200')
  const kid = extAuthKid(fromBase64(phone.aid))
  t.equal(paired.json.kid, kid, 'kid = hex SHA-1(aid)[0..15]')
  const sDb = x25519Agree(broker.prv, fromBase64(init.json.eid))
  t.equal(paired.json.code, toBase64(hmacSha256(sDb, reply)), 'code = HMAC(S_db, reply)')
  t.equal((await post(base, 'validate', { pid: phone.pid, reply }, user)).status, 406, 'the same reply again: 406')

  const keys = await login(base, 'keymgmt:search')
  const search = await call(`${https}/api/keymgmt/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(keys) },
    body: JSON.stringify({ descr: '^RVhUQUlE' }),
  })
  t.match(search.json.list, [{ kid, type: 'ECDH,CURVE25519', label: 'Pixel 8 (Android) with a very l' }], 'listed')
  t.equal(
    toBase64(fromBase64(search.json.list[0].descr)),
    toBase64(Buffer.concat([Buffer.from('EXTAID'), fromBase64(phone.pid)])),
    'descr = EXTAID ‖ pid',
  )
  t.equal((await pair(base, user, phone)).status, 406, 'the same authenticator paired again: 406')
  for (let n = 2; n <= EXT_AUTH_MAX_PAIRINGS; n++) t.equal((await pair(base, user, newPhone(), '')).status, 200)
  t.equal((await pair(base, user, newPhone())).status, 406, 'a ninth: 406')

  const paireds = await recordsOf(device.dataDir, LogType.AUTH_PAIRED_EXTERNAL)
  t.match(paireds[0], { result: LogResult.FAILED, subject: 'U', decoded: { source: 406 } }, 'the forged reply: FAILED')
  t.match(paireds[1], { result: LogResult.OK, subject: 'U', decoded: { source: 200, kid } }, 'paired: OK with its KID')
  t.equal(paireds.filter((r) => r.result === LogResult.OK).length, EXT_AUTH_MAX_PAIRINGS, 'one OK per pairing')
  const imports = await recordsOf(device.dataDir, LogType.KEY_IMPORT)
  t.equal(imports.length, EXT_AUTH_MAX_PAIRINGS, 'each pairing journaled as a key import')
  const listed = await call(`${https}/api/keymgmt/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(keys) },
    body: JSON.stringify({ descr: '^RVhUQUlE' }),
  })
  t.ok(
    listed.json.list.some((k: { label: string }) => k.label === 'ExtAuth'),
    'an empty label: ExtAuth',
  )
})

t.test('T-5.3: in a fail state, ext/init with a wrong-scope token is 409', async (t) => {
  const { base } = await owned(t, { boot: { diag: true } })
  const wrong = await login(base, 'system:wrong')
  await diagOk(base, 'break_temp')
  await flsShown(base, FLS.TEMPERATURE)
  t.equal((await post(base, 'init', { epk: brokerKey().epk }, wrong)).status, 409, 'the state before the scope')
  t.equal((await post(base, 'init', { epk: brokerKey().epk })).status, 409, 'before the missing token')
  t.equal((await post(base, 'request', { epk: brokerKey().epk, scope: 'x' })).status, 409, 'the open routes too')
  t.equal((await post(base, 'init', { epk: brokerKey().epk }, `${wrong}x`)).status, 401, 'a bad token first')
})
