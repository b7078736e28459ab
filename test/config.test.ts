// GET/POST /api/system/config end to end: fields, rules, journal, effects on the transport,
// passphrase change, wipeout and CSR generation, each on its own personalised device.
import 'reflect-metadata'
import { Pkcs10CertificateRequest } from '@peculiar/x509'
import { X509Certificate, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { connect as netConnect } from 'node:net'
import t, { type Test } from 'tap'
import { buildInitEjwt, passphraseChangeHmac } from '../client/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { plainConfigFields } from '../machines/config.js'
import { b64 } from './helpers/base64.js'
import { servedCertificate } from './helpers/device-tls.js'
import { manualClock } from './helpers/clock.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import {
  MASTER_PASS,
  USER_PASS,
  bearer,
  defaultCfg,
  keys,
  login,
  loginAnswer,
  owned,
  personalise,
  type Owned,
} from './helpers/owner.js'
import { until } from './helpers/until.js'

const B64_32 = /^[A-Za-z0-9+/]{43}=$/

async function getConfig(o: Owned, token = o.token): Promise<Record<string, any>> {
  const answer = await call(`${o.base}/api/system/config`, { headers: bearer(token) })
  if (answer.status !== 200) throw new Error(`GET config: ${answer.status} ${answer.text}`)
  return answer.json
}

function postConfig(o: Owned, body: unknown, token = o.token, extra: Record<string, string> = {}): Promise<Answer> {
  return call(`${o.base}/api/system/config`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', ...extra },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function status(base: string, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  return (await call(`${base}/api/system/status`, { headers })).json
}

async function configRecords(o: Owned) {
  const { records } = await readJournal(o.device.dataDir)
  return records.filter((r) => r.type === LogType.CONFIG_UPDATED)
}

/** A 400 (or other error) answer with the contract's JSON error body. */
function isError(t: Test, answer: Answer, status: number, what: string): void {
  t.equal(answer.status, status, `${what}: ${answer.status} ${answer.text}`)
  t.match(answer.json, { error: /^[a-z_]+$/, message: String }, `${what}: JSON error body`)
  t.equal(answer.headers['content-type'], 'application/json', `${what}: content type`)
}

t.test('GET config on E: every field of seed §2.1 with its type, none of P', async (t) => {
  const before = Math.floor(Date.now() / 1000)
  const o = await owned(t, { variant: 'E' })
  const config = await getConfig(o)
  const after = Math.ceil(Date.now() / 1000)
  t.match(config, {
    allow_keysearch: false,
    ctx: 0,
    devid: /^[0-9a-f]{16}$/,
    dnsd: Boolean,
    eid: B64_32,
    eid_sign: B64_32,
    email: 'ada@example.com',
    http_option_dosprot_mode: 0,
    http_option_hsts: false,
    hostname: 'hem.example',
    iat: Number,
    instanceid: /^[0-9a-f]{32}$/,
    ip: String,
    nonce: B64_32,
    origin: 'https://app.example',
    spk: B64_32,
    trusted_backend: false,
    trusted_ts: true,
    user: 'Ada',
    uts: Number,
  })
  for (const p of ['genuine_id', 'storage_capacity', 'storage_disk0size', 'storage_mode'])
    t.notOk(p in config, `no ${p} on E`)
  t.equal(config.devid, o.device.devid)
  t.equal(config.eid_sign, b64(o.device.logPublicKey), 'eid_sign is the log key')
  const logKey = await call(`${o.base}/api/logger/key`, { headers: bearer(await login(o.base, 'logger:get')) })
  if (logKey.status === 200) t.equal(config.eid_sign, logKey.json.key, 'eid_sign is what /api/logger/key serves')
  const challenge = (await call(`${o.base}/api/auth/token`)).json
  t.equal(config.eid, challenge.eid, 'eid is the login identity key')
  t.equal(config.spk, challenge.spk, 'spk is the session key')
  t.ok(config.iat >= before && config.iat <= after, 'iat is the Unix second of the personalisation')
  // uts goes up by at least one with each change, even within one second: never less than iat.
  t.ok(config.uts >= config.iat && config.uts < after + 60, 'uts is Unix seconds of the last change')

  const asked = Math.floor(Date.now() / 1000)
  const again = await getConfig(o)
  t.not(again.nonce, config.nonce, 'a fresh nonce each call')
  const time = Buffer.from(again.nonce, 'base64').readUInt32LE(0)
  t.ok(time >= asked && time <= Date.now() / 1000, 'the nonce starts with the time')
  t.equal(again.uts, config.uts, 'reading does not change uts')
  t.equal(again.iat, config.iat)

  t.equal((await call(`${o.base}/api/system/config`)).status, 401, 'no token')
  t.equal((await call(`${o.base}/api/system/config`, { headers: bearer('x.y.z') })).status, 401, 'bad token')
  t.equal(
    (await call(`${o.base}/api/system/config`, { headers: bearer(await login(o.base, 'logger:get')) })).status,
    200,
    'logger:get may read',
  )
  t.equal(
    (await call(`${o.base}/api/system/config`, { headers: bearer(await login(o.base, 'system:upgrade')) })).status,
    403,
    'other scopes may not',
  )
  t.equal(
    (await postConfig(o, { user: 'Eve' }, await login(o.base, 'logger:get'))).status,
    403,
    'logger:get may not write',
  )
  t.equal((await getConfig(o, await login(o.base, 'system:config', MASTER_PASS))).user, 'Ada', 'the master reads too')
})

t.test('GET config on P: also genuine_id and the storage fields', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const config = await getConfig(o)
  t.match(config, {
    devid: /^[0-9a-f]{16}$/,
    genuine_id: String,
    storage_capacity: Number,
    storage_disk0size: 131072,
    storage_mode: 0x51,
    ip: '192.168.7.1/24',
    dnsd: false,
    eid_sign: b64(o.device.logPublicKey),
    nonce: B64_32,
  })
  t.ok(config.genuine_id.length > 0)
  t.ok(Number.isInteger(config.storage_capacity) && config.storage_capacity > config.storage_disk0size)
})

t.test('POST config: booleans, ctx and dosprot mode, accepted and rejected', async (t) => {
  const o = await owned(t, { variant: 'E' })
  for (const field of ['allow_keysearch', 'trusted_ts', 'trusted_backend', 'dnsd', 'http_option_hsts']) {
    const before = (await getConfig(o))[field] as boolean
    const set = await postConfig(o, { [field]: !before })
    t.equal(set.status, 200, `${field}: ${set.text}`)
    t.same(set.json, { updated: true }, `${field} updated`)
    t.equal((await getConfig(o))[field], !before, `${field} reads back`)
    t.same(
      (await postConfig(o, { [field]: !before })).json,
      { updated: false },
      `${field}: the same value changes nothing`,
    )
    for (const wrong of ['true', 1, null, [], {}])
      isError(t, await postConfig(o, { [field]: wrong }), 400, `${field} = ${JSON.stringify(wrong)}`)
    t.equal((await getConfig(o))[field], !before, `${field} kept after refusals`)
  }
  for (const ctx of [1, 0xffff_ffff, 0]) {
    t.equal((await postConfig(o, { ctx })).status, 200, `ctx ${ctx}`)
    t.equal((await getConfig(o)).ctx, ctx)
  }
  for (const wrong of [-1, 1.5, 0x1_0000_0000, '1', true, null])
    isError(t, await postConfig(o, { ctx: wrong }), 400, `ctx ${JSON.stringify(wrong)}`)
  for (const mode of [1, 20, 255, 0]) {
    t.equal((await postConfig(o, { http_option_dosprot_mode: mode })).status, 200, `dosprot ${mode}`)
    t.equal((await getConfig(o)).http_option_dosprot_mode, mode)
  }
  for (const wrong of [-1, 0.5, 256, '2', false])
    isError(t, await postConfig(o, { http_option_dosprot_mode: wrong }), 400, `dosprot ${JSON.stringify(wrong)}`)
  t.equal((await getConfig(o)).http_option_dosprot_mode, 0)
})

t.test('POST config: user, email and origin', async (t) => {
  const o = await owned(t, { variant: 'E' })
  for (const field of ['user', 'email']) {
    const max = field === 'user' ? 'u'.repeat(64) : `${'e'.repeat(52)}@example.com`
    t.equal(max.length, 64)
    t.equal((await postConfig(o, { [field]: max })).status, 200, `${field}: 64 characters`)
    t.equal((await getConfig(o))[field], max)
    isError(t, await postConfig(o, { [field]: `${max}x` }), 400, `${field}: 65 characters`)
    isError(t, await postConfig(o, { [field]: 'x'.repeat(300) }), 400, `${field}: 300 characters`)
    isError(t, await postConfig(o, { [field]: 64 }), 400, `${field}: a number`)
    isError(t, await postConfig(o, { [field]: 'line\nbreak' }), 400, `${field}: a control character`)
    t.equal((await getConfig(o))[field], max, `${field} kept`)
    t.equal((await postConfig(o, { [field]: '' })).status, 200, `${field}: empty`)
  }
  t.equal((await postConfig(o, { user: 'Zoë Ångström' })).status, 200, 'a user name beyond ASCII')
  t.equal((await getConfig(o)).user, 'Zoë Ångström')
  t.equal((await call(`${o.base}/api/auth/token`)).json.lbl, 'Zoë Ångström', 'the login label is the user')
  t.equal((await postConfig(o, { user: 'é'.repeat(64) })).status, 200, '64 non-ASCII characters')
  isError(t, await postConfig(o, { user: 'é'.repeat(65) }), 400, '65 non-ASCII characters')
  t.equal((await postConfig(o, { user: '🔐'.repeat(64) })).status, 200, '64 characters outside the BMP')
  isError(t, await postConfig(o, { user: 'x\ud800' }), 400, 'a lone surrogate')
  isError(t, await postConfig(o, { email: 'tab\there@example.com' }), 400, 'a tab')

  for (const origin of [
    '*',
    'https://console.example',
    'http://localhost:3000',
    '*.corp.example',
    'https://[::1]:8443',
    'https://app.example',
  ]) {
    t.equal((await postConfig(o, { origin })).status, 200, `origin ${origin}`)
    t.equal((await getConfig(o)).origin, origin)
  }
  for (const wrong of [
    '',
    'garbage',
    'https://',
    'ftp://x.example',
    'https://x.example/',
    'https://x.example/path',
    '*.',
    '*.com',
    '**',
    'javascript:alert(1)',
    'https://a b.example',
    'https://[::1',
    'https://[evil.example]',
    5,
  ]) {
    isError(t, await postConfig(o, { origin: wrong }), 400, `origin ${JSON.stringify(wrong)}`)
  }
  t.equal((await getConfig(o)).origin, 'https://app.example', 'origin kept')
})

t.test('POST config on P: storage_mode and storage_disk0size', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const capacity = (await getConfig(o)).storage_capacity as number
  for (const mode of [0x50, 0x53, 0xa0, 0xa1, 0xa3, 0x51]) {
    t.equal((await postConfig(o, { storage_mode: mode })).status, 200, `storage_mode 0x${mode.toString(16)}`)
    t.equal((await getConfig(o)).storage_mode, mode)
  }
  for (const wrong of [0, 0x52, 0xa2, 0x55, 0x151, -1, '0x51', true])
    isError(t, await postConfig(o, { storage_mode: wrong }), 400, `storage_mode ${JSON.stringify(wrong)}`)
  t.equal((await getConfig(o)).storage_mode, 0x51)

  // A new size repartitions and reformats both disks (contract §6). The system samples the
  // disks every few seconds, so the layout shows a little later than `format: "done"`.
  const reformatted = (size: number) =>
    until(`reformatted for ${size}`, async () => {
      const s = await status(o.base)
      return s.format === 'done' && s.storage?.[0]?.startsWith(`${size}:`)
    })
  t.equal((await postConfig(o, { storage_disk0size: 65_536 })).status, 200, 'storage_disk0size at its minimum')
  await reformatted(65_536)
  const usable = ((await status(o.base)).storage as string[]).reduce((sum, disk) => sum + Number(disk.split(':')[0]), 0)
  t.ok(usable < capacity, 'the card keeps some sectors for itself')
  t.equal((await postConfig(o, { storage_disk0size: usable - 65_536 })).status, 200, 'storage_disk0size at its maximum')
  await reformatted(usable - 65_536)
  t.equal((await postConfig(o, { storage_disk0size: 131_072 })).status, 200)
  t.equal((await getConfig(o)).storage_disk0size, 131_072)
  await until('format done', async () => (await status(o.base)).format === 'done')
  for (const wrong of [0, 65_535, usable - 65_535, capacity - 65_536, capacity, 100_000.5, '131072'])
    isError(t, await postConfig(o, { storage_disk0size: wrong }), 400, `storage_disk0size ${JSON.stringify(wrong)}`)
  t.equal((await getConfig(o)).storage_disk0size, 131_072)

  // hostname and ip are fixed by personalisation.
  t.same(
    (await postConfig(o, { hostname: 'hem.example', ip: '192.168.7.1/24' })).json,
    { updated: false },
    'the same hostname and ip are fine',
  )
  isError(t, await postConfig(o, { ip: '192.168.7.2/24' }), 400, 'a new ip')
  isError(t, await postConfig(o, { ip: 'not an ip' }), 400, 'a bad ip')
  t.equal((await getConfig(o)).ip, '192.168.7.1/24')
})

t.test('POST config on E: the P-only fields are refused; hostname and ip are fixed', async (t) => {
  const o = await owned(t, { variant: 'E' })
  isError(t, await postConfig(o, { storage_mode: 0x51 }), 400, 'storage_mode on E')
  isError(t, await postConfig(o, { storage_disk0size: 131072 }), 400, 'storage_disk0size on E')
  t.same((await postConfig(o, { hostname: 'hem.example' })).json, { updated: false }, 'the same hostname')
  isError(t, await postConfig(o, { hostname: 'other.example' }), 400, 'a new hostname')
  isError(t, await postConfig(o, { hostname: 'bad host!' }), 400, 'a bad hostname')
  isError(t, await postConfig(o, { ip: '10.0.0.1' }), 400, 'an ip on E')
  t.equal((await getConfig(o)).hostname, 'hem.example')
  t.notOk('storage_mode' in (await getConfig(o)))
})

t.test('POST config: malformed bodies, wrong types, unknown keys, partial updates', async (t) => {
  const o = await owned(t, { variant: 'E' })
  isError(t, await postConfig(o, '{"user":'), 400, 'malformed JSON')
  isError(t, await postConfig(o, '[]'), 400, 'an array')
  isError(t, await postConfig(o, '"user"'), 400, 'a string')
  isError(t, await postConfig(o, 'null'), 400, 'null')
  isError(t, await postConfig(o, ''), 400, 'an empty body')
  for (const [field, wrong] of [
    ['wipeout', 'yes'],
    ['gen_csr', 1],
    ['tls', 'garbage'],
    ['userkey', 5],
    ['storage_mode', '81'],
  ] as const) {
    isError(t, await postConfig(o, { [field]: wrong }), 400, `${field} = ${JSON.stringify(wrong)}`)
  }
  isError(t, await postConfig(o, { user: 'x', trusted_ts: 'no' }), 400, 'one wrong type among good fields')
  isError(t, await postConfig(o, JSON.stringify({ user: 'x' }) + 'x'.repeat(7400)), 413, 'too large')

  const before = await getConfig(o)
  const unknown = await postConfig(o, { colour: 'blue', nested: { user: 'Eve' }, __proto__x: 1 })
  t.equal(unknown.status, 200, unknown.text)
  t.same(unknown.json, { updated: false }, 'unknown keys are ignored')
  t.same((await postConfig(o, {})).json, { updated: false }, 'an empty object')
  const proto = await postConfig(o, '{"__proto__":{"wipeout":true,"user":"Hacked"},"constructor":{"user":"Hacked"}}')
  t.same(proto.json, { updated: false }, 'fields nested under __proto__ are not fields')
  t.equal((await getConfig(o)).user, 'Ada')
  t.equal((await getConfig(o)).uts, before.uts, 'no change, no new uts')

  const partial = await postConfig(o, { user: 'Grace', colour: 'blue' })
  t.same(partial.json, { updated: true })
  const after = await getConfig(o)
  t.equal(after.user, 'Grace')
  const untouched = plainConfigFields.filter((field) => field !== 'user')
  for (const field of [...untouched, 'instanceid', 'iat', 'devid', 'eid', 'eid_sign']) {
    t.same(after[field], before[field], `${field} kept by a partial update`)
  }
  t.notOk('colour' in after)
})

t.test('POST config: uts increases after every change, journaled OK and FAILED, nothing half-applied', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const start = (await getConfig(o)).uts as number
  const seen = [start]
  // Several changes within (most likely) the same second: uts must still go up each time.
  for (const user of ['A', 'B', 'C', 'D']) {
    t.same((await postConfig(o, { user })).json, { updated: true })
    seen.push((await getConfig(o)).uts)
  }
  for (let i = 1; i < seen.length; i++) t.ok(seen[i]! > seen[i - 1]!, `uts ${seen[i]} > ${seen[i - 1]}`)
  t.same((await postConfig(o, { user: 'D' })).json, { updated: false })
  t.equal((await getConfig(o)).uts, seen.at(-1), 'an update that changes nothing keeps uts')

  let records = await configRecords(o)
  const oks = records.filter((r) => r.result === LogResult.OK)
  t.equal(oks.length, 5)
  t.match(oks[0]!.decoded, { source: 200, changed: { user: 'A' }, uts: seen[1] })
  t.same(Object.keys((oks[3]!.decoded as { changed: object }).changed), ['user'], 'names only what changed')
  t.equal(oks[0]!.subject, 'U')
  t.notOk('changed' in oks[4]!.decoded!, 'no change recorded for updated:false')

  // wipeout: false asks for nothing: 406, journaled FAILED.
  const no = await postConfig(o, { wipeout: false, user: 'Mallory' })
  isError(t, no, 406, 'wipeout false')
  records = await configRecords(o)
  t.match(records.at(-1), { result: LogResult.FAILED, decoded: { source: 406 } }, 'FAILED 406 journaled')

  // A bad field anywhere: no other field of the request is applied.
  const good = { user: 'Mallory', allow_keysearch: true, ctx: 77 }
  for (const bad of [
    { ctx: -1 },
    { origin: 'garbage' },
    { email: 'x'.repeat(65) },
    { hostname: 'other.example' },
    { storage_mode: 0x51 },
    { trusted_ts: 'yes' },
    { userkey: b64(randomBytes(32)) },
    { userkey: b64(randomBytes(32)), userkey_nonce: b64(randomBytes(32)), userkey_hmac: b64(randomBytes(32)) },
    { tls: { crt: 'garbage' } },
    { gen_csr: 'yes' },
    { wipeout: false },
  ]) {
    const answer = await postConfig(o, { ...good, ...bad })
    t.ok(answer.status === 400 || answer.status === 406, `${JSON.stringify(bad)} refused: ${answer.status}`)
  }
  const after = await getConfig(o)
  t.match(after, { user: 'D', allow_keysearch: false, ctx: 0, uts: seen.at(-1) }, 'nothing half-applied')
  records = await configRecords(o)
  t.equal(records.filter((r) => r.result === LogResult.OK).length, 5, 'no OK record for a refused request')
  t.equal(
    records.filter((r) => r.result === LogResult.FAILED).length,
    3,
    'the 406 refusals are journaled FAILED (wipeout false twice, the made-up nonce)',
  )
  t.equal((await verifyDataDir(o.device.dataDir, o.device.logPublicKey, true)).ok, true, 'the journal verifies')

  // Changes survive a reboot: the configuration is folded from the journal.
  t.equal((await call(`${o.base}/api/system/reboot`, { headers: bearer(o.token) })).status, 200)
  await until(
    'the old token dies',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).status === 401,
  )
  const token = await login(o.base, 'system:config')
  const rebooted = await getConfig(o, token)
  for (const field of ['user', 'email', 'origin', 'ctx', 'uts', 'iat', 'instanceid', 'allow_keysearch'])
    t.same(rebooted[field], after[field], `${field} after reboot`)
  t.same((await postConfig(o, { user: 'E' }, token)).json, { updated: true })
  t.ok((await getConfig(o, token)).uts > after.uts, 'uts goes on increasing after a reboot')
})

t.test('origin really changes CORS; OPTIONS answers with it', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const withOrigin = (origin: string, base = o.base) => call(`${base}/api/system/status`, { headers: { origin } })
  const allowed = (a: Answer) => a.status === 200 && a.headers['access-control-allow-origin'] !== undefined
  t.ok(allowed(await withOrigin('https://app.example')), 'the personalised origin')
  isError(t, await withOrigin('https://new.example'), 412, 'a foreign origin')
  t.equal((await call(`${o.base}/api/system/status`)).status, 200, 'no Origin header is fine')

  // The change is in force for the very next request.
  t.equal((await postConfig(o, { origin: 'https://new.example' })).status, 200)
  const ok = await withOrigin('https://new.example')
  t.equal(ok.status, 200)
  t.equal(ok.headers['access-control-allow-origin'], 'https://new.example')
  t.equal(ok.headers['access-control-allow-credentials'], 'true')
  isError(t, await withOrigin('https://app.example'), 412, 'the old origin')
  isError(
    t,
    await postConfig(o, { user: 'x' }, o.token, { origin: 'https://app.example' }),
    412,
    'a POST from the old origin',
  )
  t.equal((await getConfig(o)).user, 'Ada', 'refused by CORS: not applied')
  t.equal((await withOrigin('https://new.example', o.https)).status, 200, 'over HTTPS too')

  const preflight = await call(`${o.base}/api/system/config`, {
    method: 'OPTIONS',
    headers: { origin: 'https://new.example' },
  })
  t.equal(preflight.status, 204)
  t.match(preflight.headers, {
    'access-control-allow-origin': 'https://new.example',
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers': 'Content-Type, Cache-Control, Pragma, Expires, Authorization, Content-Disposition',
    'access-control-max-age': '86400',
    'access-control-allow-credentials': 'true',
  })
  t.equal(
    (await call(`${o.base}/api/system/config`, { method: 'OPTIONS', headers: { origin: 'https://app.example' } }))
      .status,
    412,
    'no preflight for the old origin',
  )

  t.equal((await postConfig(o, { origin: '*.corp.example' }, o.token, { origin: 'https://new.example' })).status, 200)
  t.equal((await withOrigin('https://a.corp.example')).headers['access-control-allow-origin'], 'https://a.corp.example')
  t.equal((await withOrigin('http://b.a.corp.example:8080')).status, 200, 'any depth, scheme and port')
  t.equal((await withOrigin('https://corp.example')).status, 412, 'not the domain itself')
  t.equal((await withOrigin('https://evilcorp.example')).status, 412, 'not a look-alike')
  t.equal((await withOrigin('https://corp.example.evil')).status, 412, 'not a suffix trick')
  t.equal((await withOrigin('https://new.example')).status, 412)
  const wild = await call(`${o.base}/api/system/status`, {
    method: 'OPTIONS',
    headers: { origin: 'https://x.corp.example' },
  })
  t.equal(wild.headers['access-control-allow-origin'], 'https://x.corp.example')

  t.equal(
    (await postConfig(o, { origin: 'https://Mixed.Example:8443' }, o.token, { origin: 'https://a.corp.example' }))
      .status,
    200,
  )
  t.equal((await withOrigin('https://mixed.example:8443')).status, 200, 'scheme and host match ignoring case')
  t.equal((await withOrigin('https://mixed.example')).status, 412, 'but the port counts')

  t.equal((await postConfig(o, { origin: '*' }, o.token, { origin: 'https://mixed.example:8443' })).status, 200)
  t.equal((await withOrigin('https://anything.example')).status, 200, '* allows any origin')
})

t.test('http_option_hsts adds Strict-Transport-Security on HTTPS only', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const hsts = async (base: string) => (await call(`${base}/api/system/status`)).headers['strict-transport-security']
  t.equal(await hsts(o.https), undefined, 'off by default')
  t.equal((await postConfig(o, { http_option_hsts: true })).status, 200)
  t.match(await hsts(o.https), /^max-age=\d+/, 'on HTTPS')
  t.equal(await hsts(o.base), undefined, 'never on plain HTTP')
  t.match((await call(`${o.https}/api/nothing`)).headers['strict-transport-security'], /max-age/, 'on HTTPS errors too')
  t.equal((await postConfig(o, { http_option_hsts: false })).status, 200)
  t.equal(await hsts(o.https), undefined, 'off again')
})

/**
 * Sends the headers of a POST config of `user` and part of its body; `finish` sends the rest. `answer`
 * is what the device wrote once it answered or closed the connection (empty when it closed without an answer).
 */
async function slowRequest(t: Test, base: string, token: string, user: string) {
  const url = new URL(base)
  const socket = netConnect(Number(url.port), url.hostname)
  socket.on('error', () => undefined)
  t.teardown(() => socket.destroy())
  await once(socket, 'connect')
  const body = JSON.stringify({ user })
  socket.write(
    `POST /api/system/config HTTP/1.1\r\nHost: ${url.host}\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 6)}`,
  )
  const answer = new Promise<string>((resolve) => {
    let response = ''
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString()
      if (response.includes('\r\n\r\n')) resolve(response)
    })
    socket.on('close', () => resolve(response))
  })
  return { answer, finish: () => void socket.write(body.slice(6)) }
}

t.test('http_option_dosprot_mode N cuts a slow request by a deadline of N × 0.5 s', async (t) => {
  // The deadlines run on the device's clock: the test sees which one a request arms, and fires it.
  const clock = manualClock()
  const o = await owned(t, { variant: 'E', boot: { clock } })
  const slowUnder = async (mode: number, user: string) => {
    t.equal((await postConfig(o, { http_option_dosprot_mode: mode })).status, 200)
    const armed = clock.armed()
    const slow = await slowRequest(t, o.base, o.token, user)
    // Another request answered: the device has read the slow one's head, where its deadline is armed.
    t.equal((await call(`${o.base}/api/system/status`)).status, 200)
    const deadlines = clock.armed().filter((ms) => !armed.includes(ms))
    return { ...slow, deadlines }
  }
  const cut = async (slow: { answer: Promise<string>; deadlines: number[] }) => {
    clock.advance(slow.deadlines[0]!)
    t.match(await slow.answer, /^HTTP\/1\.1 408 /, 'firing it cuts the request: 408')
    t.equal((await getConfig(o)).user, 'Patient', 'the cut request was not applied')
  }

  // Disabled (0): the slow request is left alone.
  const patient = await slowUnder(0, 'Patient')
  t.same(patient.deadlines, [], 'no deadline while disabled')
  patient.finish()
  t.match(await patient.answer, /^HTTP\/1\.1 200 /, 'the slow request is answered once its body is in')
  t.equal((await getConfig(o)).user, 'Patient')

  const slow = await slowUnder(2, 'Slowpoke')
  t.same(slow.deadlines, [1000], 'a deadline of 2 x 500 ms')
  await cut(slow)

  // Fast requests still work, with and without a body, on both listeners.
  t.equal((await call(`${o.base}/api/system/status`)).status, 200)
  t.equal((await call(`${o.https}/api/system/status`)).status, 200)
  t.same((await postConfig(o, { user: 'Quick' })).json, { updated: true })
  t.equal((await getConfig(o)).user, 'Quick')
  t.same((await postConfig(o, { user: 'Patient' })).json, { updated: true })

  const slower = await slowUnder(6, 'Slowpoke')
  t.same(slower.deadlines, [3000], 'N = 6: a deadline of 3 s')
  await cut(slower)

  const disabled = await slowUnder(0, 'Patient again')
  t.same(disabled.deadlines, [], 'disabled again')
  disabled.finish()
  t.match(await disabled.answer, /^HTTP\/1\.1 200 /)
})

t.test('trusted_ts and ctx show in status', async (t) => {
  const o = await owned(t, { variant: 'E' })
  let s = await status(o.base)
  t.notOk('tts' in s, 'no tts while the time source is trusted')
  t.equal(s.ctx, 0)
  t.equal((await postConfig(o, { trusted_ts: false, ctx: 4242 })).status, 200)
  s = await status(o.base)
  t.equal(s.tts, false)
  t.equal(s.ctx, 4242)
  t.equal((await postConfig(o, { trusted_ts: true })).status, 200)
  t.notOk('tts' in (await status(o.base)))
  t.equal((await status(o.base)).ctx, 4242)
})

t.test('passphrase change: userkey + nonce + HMAC', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const NEW_PASS = 'a new passphrase for Ada'
  const eid = (await getConfig(o)).eid as string
  const fresh = await keys.get(NEW_PASS, eid)
  const change = async (passphrase = NEW_PASS) => {
    const key = await keys.get(passphrase, eid)
    const { nonce, spk } = await getConfig(o)
    return {
      userkey: b64(key.publicKey),
      userkey_nonce: nonce as string,
      userkey_hmac: passphraseChangeHmac(key.seed, spk, nonce),
    }
  }

  // Incomplete triples are malformed.
  const full = await change()
  for (const fields of [
    ['userkey'],
    ['userkey_nonce'],
    ['userkey_hmac'],
    ['userkey', 'userkey_nonce'],
    ['userkey', 'userkey_hmac'],
    ['userkey_nonce', 'userkey_hmac'],
  ] as const) {
    const body = Object.fromEntries(fields.map((f) => [f, full[f]]))
    isError(t, await postConfig(o, body), 400, `only ${fields.join(' + ')}`)
  }
  isError(t, await postConfig(o, { ...full, userkey: b64(randomBytes(16)) }), 400, 'a short userkey')
  isError(t, await postConfig(o, { ...full, userkey_hmac: 'not base64!' }), 400, 'an hmac that is not base64')

  // A bad HMAC (made with another passphrase's seed) → 406.
  const other = await keys.get('someone else entirely', eid)
  const forged = await change()
  const { spk } = await getConfig(o)
  isError(
    t,
    await postConfig(o, { ...forged, userkey_hmac: passphraseChangeHmac(other.seed, spk, forged.userkey_nonce) }),
    406,
    'bad HMAC',
  )
  // The master passphrase as the new user passphrase → 406: the master would log in as the user.
  isError(t, await postConfig(o, await change(MASTER_PASS)), 406, 'the master passphrase')
  // A made-up nonce → 406.
  const madeUp = b64(randomBytes(32))
  isError(
    t,
    await postConfig(o, {
      userkey: b64(fresh.publicKey),
      userkey_nonce: madeUp,
      userkey_hmac: passphraseChangeHmac(fresh.seed, spk, madeUp),
    }),
    406,
    'made-up nonce',
  )
  t.equal(
    (await loginAnswer(o.base, 'system:config', USER_PASS)).status,
    200,
    'the old passphrase still works after refusals',
  )

  const good = await change()
  const utsBefore = (await getConfig(o)).uts as number
  const answer = await postConfig(o, good)
  t.equal(answer.status, 200, answer.text)
  t.same(answer.json, { updated: true })
  t.ok((await getConfig(o)).uts > utsBefore, 'a passphrase change is a change: uts increases')
  t.equal(
    (await loginAnswer(o.base, 'system:config', USER_PASS)).status,
    401,
    'the old passphrase stops working at once',
  )
  const token = await login(o.base, 'system:config', NEW_PASS)
  t.match(
    JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()),
    { sub: 'U' },
    'the new passphrase logs in as the user',
  )
  t.ok(await login(o.base, 'system:config', MASTER_PASS), 'the master passphrase is untouched')

  // The same nonce again → 406; nothing changes.
  isError(
    t,
    await postConfig(o, {
      ...good,
      userkey: b64(other.publicKey),
      userkey_hmac: passphraseChangeHmac(other.seed, spk, good.userkey_nonce),
    }),
    406,
    'a used nonce',
  )
  isError(t, await postConfig(o, good), 406, 'the same request replayed')
  t.ok(await login(o.base, 'system:config', NEW_PASS), 'still the new passphrase')

  const records = await configRecords(o)
  const ok = records.filter((r) => r.result === LogResult.OK)
  t.equal(ok.length, 1)
  t.match(ok[0]!.decoded, { source: 200, secrets: ['userkey'] }, 'the change is journaled by name')
  const failed = records.filter((r) => r.result === LogResult.FAILED)
  t.equal(failed.length, 5, 'bad HMAC, master key, made-up nonce, used nonce, replay: FAILED')
  for (const r of failed) t.match(r.decoded, { source: 406 })
  const journal = JSON.stringify((await readJournal(o.device.dataDir)).records)
  for (const key of [fresh.publicKey, other.publicKey]) {
    t.notOk(
      journal.includes(b64(key)) ||
        journal.includes(Buffer.from(key).toString('base64url')) ||
        journal.includes(Buffer.from(key).toString('hex')),
      'no key in the journal',
    )
  }
  const raw = Buffer.concat((await readJournal(o.device.dataDir)).files.map((f) => Buffer.from(f.bytes)))
  t.equal(raw.indexOf(Buffer.from(fresh.publicKey)), -1, 'not even as raw bytes')

  // The new passphrase survives a reboot (the enclave keeps it).
  t.equal((await call(`${o.base}/api/system/reboot`, { headers: bearer(token) })).status, 200)
  await until(
    'the old token dies',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(token) })).status === 401,
  )
  t.ok(await login(o.base, 'system:config', NEW_PASS))
  t.equal((await loginAnswer(o.base, 'system:config', USER_PASS)).status, 401)
})

t.test('a nonce from before a reboot is stale', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const { nonce, eid } = await getConfig(o)
  const key = await keys.get('after the reboot', eid)
  t.equal((await call(`${o.base}/api/system/reboot`, { headers: bearer(o.token) })).status, 200)
  await until(
    'the old token dies',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).status === 401,
  )
  const token = await login(o.base, 'system:config')
  const { spk } = await getConfig(o, token)
  isError(
    t,
    await postConfig(
      o,
      { userkey: b64(key.publicKey), userkey_nonce: nonce, userkey_hmac: passphraseChangeHmac(key.seed, spk, nonce) },
      token,
    ),
    406,
    'stale nonce',
  )
  t.ok(await login(o.base, 'system:config'))
})

t.test('wipeout: factory reset, reboot, the journal survives, personalised again', async (t) => {
  const o = await owned(t, { variant: 'E' })
  t.equal((await postConfig(o, { ctx: 99, user: 'Before' })).status, 200)
  const before = await getConfig(o)
  isError(t, await postConfig(o, { wipeout: true, ctx: -1 }), 400, 'a wipeout with a malformed field')
  isError(
    t,
    await postConfig(o, { wipeout: true, hostname: 'other.example' }),
    400,
    'a wipeout that would change the hostname',
  )
  isError(t, await postConfig(o, { wipeout: 1 }), 400, 'wipeout not a boolean')
  t.match(await getConfig(o), { user: 'Before', ctx: 99 }, 'not wiped by a refused request')
  const wiped = await postConfig(o, { wipeout: true })
  t.equal(wiped.status, 200, wiped.text)
  t.match(wiped.json, { updated: true })

  await until('fresh again', async () => (await status(o.base)).inited === false)
  await until(
    'rebooted: the old token is dead',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).status === 401,
  )
  const s = await status(o.base)
  t.equal(s.inited, false)
  t.equal(s.ctx, 0, 'factory ctx')
  t.equal((await call(`${o.base}/api/auth/token`)).status, 409, 'no login on a fresh device')
  t.equal((await call(`${o.base}/api/auth/init`)).status, 200, 'ready to be personalised')

  const { records } = await readJournal(o.device.dataDir)
  const wipeRecord = records.findIndex((r) => r.type === LogType.CONFIG_UPDATED && r.decoded?.wipeout === true)
  t.ok(wipeRecord > 0, 'the wipeout is journaled')
  t.match(records[wipeRecord], { result: LogResult.OK, subject: 'U', decoded: { source: 200 } })
  t.ok(
    records.some((r) => r.type === LogType.DEVICE_INITED),
    'the old personalisation record is still there',
  )
  t.ok(
    records.slice(wipeRecord).some((r) => r.type === LogType.STARTUP),
    'a new boot after the wipeout',
  )
  t.equal((await verifyDataDir(o.device.dataDir, o.device.logPublicKey, true)).ok, true, 'the journal verifies')

  // Personalised again by someone else, with other passphrases.
  const challenge = (await call(`${o.base}/api/auth/init`)).json
  const user = await keys.get('second owner user', challenge.eid)
  const master = await keys.get('second owner master', challenge.eid)
  const cfg = { ...defaultCfg('E', user, master), user: 'Bob', hostname: 'bob.example', origin: '*' }
  const init = buildInitEjwt(master, challenge, cfg, Math.floor(Date.now() / 1000))
  const again = await call(`${o.base}/api/auth/init`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ init }),
  })
  t.equal(again.status, 200, again.text)
  t.not(again.json.instanceid, before.instanceid, 'a new instance')
  t.equal((await loginAnswer(o.base, 'system:config', USER_PASS)).status, 401, 'the old passphrase is gone')
  const token = await login(o.base, 'system:config', 'second owner user')
  const config = await getConfig(o, token)
  t.match(config, { user: 'Bob', hostname: 'bob.example', ctx: 0, origin: '*', instanceid: again.json.instanceid })
  t.equal(config.eid_sign, before.eid_sign, 'the log key survives')
  t.equal(config.devid, before.devid)

  // And the new life survives a reboot: the fold of the journal ends with it.
  t.equal((await call(`${o.base}/api/system/reboot`, { headers: bearer(token) })).status, 200)
  await until(
    'rebooted',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(token) })).status === 401,
  )
  const after = await getConfig(o, await login(o.base, 'system:config', 'second owner user'))
  t.match(after, { user: 'Bob', hostname: 'bob.example', instanceid: again.json.instanceid })
  t.notOk('inited' in (await status(o.base)))
})

t.test('wipeout on P: disks erased; a master may wipe too', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const master = await login(o.base, 'system:config', MASTER_PASS)
  t.equal((await postConfig(o, { wipeout: true }, master)).status, 200)
  await until(
    'rebooted',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).status === 401,
  )
  const s = await status(o.base)
  t.equal(s.inited, false)
  t.notOk('format' in s, 'no format state on a fresh device')
  const init = await personalise(o.base, 'P')
  t.equal(init.status, 200, init.text)
  await until('formatted again', async () => (await status(o.base)).format === 'done')
})

t.test('gen_csr: a CSR for the TLS key the HTTPS port serves, and genuine on P', async (t) => {
  for (const variant of ['P', 'E'] as const) {
    const o = await owned(t, { variant })
    const answer = await postConfig(o, { gen_csr: true })
    t.equal(answer.status, 200, answer.text)
    t.match(answer.json, { csr: String, updated: false })
    t.equal('genuine' in answer.json, variant === 'P', `genuine only on P (${variant})`)
    if (variant === 'P') t.ok(Buffer.from(answer.json.genuine, 'base64').length > 0)
    const csr = new Pkcs10CertificateRequest(Buffer.from(answer.json.csr, 'base64'))
    t.ok(await csr.verify(), 'self-signed by the key it names')
    t.equal(csr.subject, 'CN=hem.example', 'CN is the hostname')
    const served = new X509Certificate(await servedCertificate(o.https))
    t.same(
      Buffer.from(csr.publicKey.rawData),
      served.publicKey.export({ type: 'spki', format: 'der' }),
      'the key the HTTPS port serves',
    )

    const both = await postConfig(o, { gen_csr: true, user: 'Csr' })
    t.match(both.json, { csr: String, updated: true }, 'with a change in the same request')
    t.same((await postConfig(o, { gen_csr: false })).json, { updated: false }, 'gen_csr false: no csr')
  }
})
