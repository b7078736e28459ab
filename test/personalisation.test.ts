import t from 'tap'
import { buildEjwt } from '../client/ejwt-builder.js'
import { LogType } from '../protocol/journal.js'
import { b64 } from './helpers/base64.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { MASTER_PASS, USER_PASS, bearer, defaultCfg, keys, login, personalise } from './helpers/owner.js'
import { until } from './helpers/until.js'

t.test('P: a fresh device is personalised by its owner, formats its disks, then only tokens open it', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir() })
  const base = device.httpUrl!
  t.equal((await call(`${base}/api/system/status`)).json.inited, false)
  t.equal((await call(`${base}/api/auth/token`)).status, 409, 'no login before personalisation')
  const challenge = await call(`${base}/api/auth/init`)
  t.equal(challenge.status, 200)
  t.match(challenge.json, {
    spk: /^[A-Za-z0-9+/]{43}=$/,
    jti: /^[A-Za-z0-9+/]{43}=$/,
    eid: /^[A-Za-z0-9+/]{43}=$/,
    genuine: String,
    exp: Number,
  })

  const init = await personalise(base, 'P', { gen_csr: true })
  t.equal(init.status, 200, init.text)
  t.match(init.json, { instanceid: /^[0-9a-f]{32}$/, token: /^[\w-]+\.[\w-]+\.[\w-]+$/, csr: String, genuine: String })
  const claims = JSON.parse(Buffer.from(init.json.token.split('.')[1], 'base64url').toString())
  t.match(claims, { scope: 'system:config', sub: 'U' })
  t.equal(claims.exp - claims.iat, 8 * 3600)

  // The status keeps answering while the disks format: a refused connection fails at once.
  await until('formatting done', async () => (await call(`${base}/api/system/status`)).json.format === 'done', {
    rethrow: true,
  })
  const status = (await call(`${base}/api/system/status`)).json
  t.notOk('inited' in status, '`inited` is absent once personalised')
  t.equal((await call(`${base}/api/auth/init`)).status, 406)

  const config = await call(`${base}/api/system/config`, { headers: bearer(init.json.token) })
  t.equal(config.status, 200)
  t.match(config.json, {
    user: 'Ada',
    hostname: 'hem.example',
    origin: 'https://app.example',
    storage_mode: 0x51,
    storage_disk0size: 131072,
    instanceid: init.json.instanceid,
  })

  const { records } = await readJournal(device.dataDir)
  const inited = records.find((r) => r.type === LogType.DEVICE_INITED)!
  t.equal(inited.subject, 'M')
  t.notMatch(JSON.stringify(inited.decoded), /masterkey|userkey/, 'no key in the journal')
  const transitions = records
    .filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'personalisation')
    .map((r) => r.decoded?.to)
  t.same(transitions, ['formatting', 'personalised'])
})

t.test('E: personalised straight away; the quirks of several clients are accepted', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const base = device.httpUrl!
  const challenge = (await call(`${base}/api/auth/init`)).json
  t.notOk('genuine' in challenge, 'no enclave on E')
  const master = await keys.get(MASTER_PASS, challenge.eid)
  const user = await keys.get(USER_PASS, challenge.eid)
  const cfg = defaultCfg('E', user, master)
  const iat = Math.floor(Date.now() / 1000) - 3
  // Key order free, escaped slashes, iat a few seconds past, exp equal to the challenge exp.
  const esc = (s: string) => s.replace(/\//g, '\\/')
  const payloadJson =
    `{"cfg":${esc(JSON.stringify(cfg))},"iss":"${esc(b64(master.publicKey))}","exp":${challenge.exp},` +
    `"aud":"${esc(challenge.spk)}","iat":${iat},"jti":"${esc(challenge.jti)}"}`
  const init = buildEjwt({
    seed: master.seed,
    spk: challenge.spk,
    payloadJson,
    headerJson: '{"typ":"JWT","alg":"HS256","ecdh":"x25519"}',
  })
  const answer = await call(`${base}/api/auth/init`, {
    method: 'POST',
    body: JSON.stringify({ init }),
    headers: { 'content-type': 'application/json' },
  })
  t.equal(answer.status, 200, answer.text)
  t.notOk('inited' in (await call(`${base}/api/system/status`)).json)
  t.notOk('format' in (await call(`${base}/api/system/status`)).json, 'no disks to format on E')
  t.ok(await login(base, 'system:config'))
})

t.test('init refusals: replayed challenge, wrong signer, bad cfg, garbage', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E' })
  const base = device.httpUrl!
  const post = (init: unknown) =>
    call(`${base}/api/auth/init`, {
      method: 'POST',
      body: JSON.stringify({ init }),
      headers: { 'content-type': 'application/json' },
    })
  const challenge = (await call(`${base}/api/auth/init`)).json
  const master = await keys.get(MASTER_PASS, challenge.eid)
  const user = await keys.get(USER_PASS, challenge.eid)
  const claims = (cfg: Record<string, unknown>, iss = master.publicKey) => ({
    jti: challenge.jti,
    aud: challenge.spk,
    exp: challenge.exp,
    iat: Math.floor(Date.now() / 1000),
    iss: b64(iss),
    cfg,
  })
  const cfg = defaultCfg('E', user, master)
  t.equal((await post('not-a-jwt')).status, 400)
  t.equal(
    (await post(buildEjwt({ seed: user.seed, spk: challenge.spk, claims: claims(cfg, user.publicKey) }))).status,
    401,
    'signed by the user key',
  )
  t.equal(
    (
      await post(
        buildEjwt({ seed: master.seed, spk: challenge.spk, claims: claims({ ...cfg, email: 'x'.repeat(65) }) }),
      )
    ).status,
    400,
    'email too long',
  )
  const { hostname: _dropped, ...noHostname } = cfg
  t.equal(
    (await post(buildEjwt({ seed: master.seed, spk: challenge.spk, claims: claims(noHostname) }))).status,
    400,
    'hostname missing',
  )
  t.equal(
    (await post(buildEjwt({ seed: master.seed, spk: challenge.spk, claims: claims({ ...cfg, storage_mode: 0x51 }) })))
      .status,
    400,
    'storage on E',
  )
  t.match(
    await post(
      buildEjwt({ seed: master.seed, spk: challenge.spk, claims: claims({ ...cfg, userkey: cfg.masterkey }) }),
    ),
    { status: 400, json: { message: /must differ/ } },
    'the user key is the master key',
  )
  t.match(
    await post(
      buildEjwt({
        seed: master.seed,
        spk: challenge.spk,
        claims: claims({ ...cfg, userkey: b64(new Uint8Array(32)) }),
      }),
    ),
    { status: 400, json: { message: /small order/ } },
    'a user key nobody can log in with',
  )
  const good = buildEjwt({ seed: master.seed, spk: challenge.spk, claims: claims(cfg) })
  t.equal((await post(good)).status, 200)
  t.equal((await post(good)).status, 406, 'once personalised')
  t.equal((await call(`${base}/api/system/status`)).json.fls_state, 0)
})
