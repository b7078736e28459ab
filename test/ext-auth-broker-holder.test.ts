// Issue 37 item 5: an attacker holding every bucket of the broker learns no scope and can mint no token. A real
// device, the built hem-cloud (test mode), the built hem-authenticator auto and hemctl run a pairing, an approval and
// a denial; the attacker then reads every JetStream KV bucket raw (the embedded nats-server's credentials taken from
// the cloud's data dir, so the broker's master secret too) and tries everything it found against the device.
//
// What the protocol cannot prevent: the client holds no secret, so an authreply is a bearer credential until the
// device takes it. An attacker who reads an `authreply` while its event is still pending (between the phone's answer
// and the client's ext/token) can race the client to ext/token and win. Today the device mints the token for
// whoever comes first (the approval is spent once, as it must be) and refuses the client's own exchange after that
// with 401; the owner sees the exchange in the journal as AUTH_SUCCESS_EXTERNAL for the pairing's KID. The first
// test pins that down, so a change of it is seen. What holds regardless: the stolen token has only the scope the
// owner approved, for no longer than the owner granted, and the attacker could not choose either.
import t from 'tap'
import { join } from 'node:path'
import {
  decodeBase64,
  EXT_JWT_APP_HEADER,
  extJwtSigned,
  openScope,
  parseExtJwt,
  type ParsedExtJwt,
  sameBytes,
  scopeKey,
  sealScope,
  signExtJwt,
  x25519Agree,
} from '../protocol/index.js'
import { SessionKeys, type SessionKind, NO_SUBJECT } from '../cloud/notify/session-keys.js'
import { LogType } from '../protocol/journal.js'
import { autoAuthenticator, cloudProcess } from './helpers/ext-e2e.js'
import { readEveryBucket, type RawBuckets } from './helpers/ext-e2e-buckets.js'
import { brokerKey, payloadOf, post } from './helpers/ext-phone.js'
import { hemctlInProcess } from './helpers/hemctl-in-process.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

const APPROVED = 'system:config'
const RACED = 'keymgmt:list'
const FORGED_FOR = 'keymgmt:search'

/** Every text the buckets hold: keys, and values read as UTF-8. */
function textsOf(buckets: RawBuckets): string[] {
  return [...buckets.values()].flatMap((values) =>
    [...values].flatMap(([key, value]) => [key, Buffer.from(value).toString('utf8')]),
  )
}

/** Every run of base64 or base64url in `texts`, decoded (latin1, so any bytes survive as text). */
function decodedRuns(texts: string[]): Uint8Array[] {
  const runs = texts.flatMap((text) => [...text.matchAll(/[A-Za-z0-9+/_-]{8,}={0,2}/g)].map((m) => m[0]))
  return runs.flatMap((run) => {
    const standard = /[_-]/.test(run) ? undefined : decodeBase64(run)
    return [...(standard ? [standard] : []), new Uint8Array(Buffer.from(run, 'base64url'))]
  })
}

/** Every JWT-like value in `texts` that parses as an eJWT. */
function jwtsOf(texts: string[]): { text: string; parsed: ParsedExtJwt }[] {
  const found = new Map<string, ParsedExtJwt>()
  for (const text of texts)
    for (const [jwt] of text.matchAll(/[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{43}/g)) {
      try {
        found.set(jwt, parseExtJwt(jwt))
      } catch {
        // not an eJWT: a value that merely looks like one
      }
    }
  return [...found].map(([text, parsed]) => ({ text, parsed }))
}

/** What the attacker makes of the buckets: texts, decoded runs, eJWTs, 32-byte values, jtis, sealed entries. */
function loot(buckets: RawBuckets) {
  const texts = textsOf(buckets)
  const decoded = decodedRuns(texts)
  const decodedTexts = decoded.map((bytes) => Buffer.from(bytes).toString('latin1'))
  const jwts = jwtsOf(texts)
  const payloads = jwts.map(({ parsed }) => JSON.stringify(parsed.payload))
  const all = [...texts, ...decodedTexts, ...payloads]
  const binary = [...buckets.values()].flatMap((values) => [...values.values()]).filter((v) => v.length === 32)
  const hex = texts.flatMap((text) => [...text.matchAll(/\b[0-9a-f]{64}\b/g)].map((m) => Buffer.from(m[0], 'hex')))
  const keys = dedupe([...decoded.filter((b) => b.length === 32), ...hex, ...binary])
  const jtis = dedupe(
    all.flatMap((text) => [...text.matchAll(/"jti":"([^"]+)"/g)].map((m) => decodeBase64(m[1]!) ?? new Uint8Array())),
  ).filter((jti) => jti.length > 0)
  const sealed = [...new Set(all.flatMap((text) => [...text.matchAll(/A[A-Za-z0-9+/]{40,}={0,2}/g)].map((m) => m[0])))]
  return { all, jwts, keys, binary, jtis, sealed }
}

function dedupe(values: Uint8Array[]): Uint8Array[] {
  return [...new Map(values.map((v) => [Buffer.from(v).toString('hex'), new Uint8Array(v)])).values()]
}

/**
 * Every shared secret a holder of the master secret derives: the broker's session keys of today and yesterday (of
 * every kind, for every eid and aid found) agreed with each eid and aid: S_db and S_ab.
 */
function brokerSecrets(masters: Uint8Array[], publics: Uint8Array[], now: number): Uint8Array[] {
  const day = Math.floor(now / 86400)
  const secrets: Uint8Array[] = []
  for (const master of masters) {
    const keys = new SessionKeys(master)
    const subjects: [SessionKind, Uint8Array][] = [
      ['anonymous', NO_SUBJECT],
      ...publics.flatMap((p): [SessionKind, Uint8Array][] => [
        ['eid', p],
        ['aid', p],
      ]),
    ]
    for (const [kind, subject] of subjects)
      for (const d of [day, day - 1])
        for (const peer of publics) secrets.push(x25519Agree(keys.ofDay(kind, subject, d).privateKey, peer))
  }
  return secrets
}

const postJson = (url: string, body: unknown) =>
  call(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

t.test('the broker-holder: no scope learnt, no token minted from what the buckets hold', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { dataDir: join(root, 'device') })
  const cloud = await cloudProcess(t)
  const cloudData = cloud.dataDir
  const auto = await autoAuthenticator(t, cloud.url, 'allow,deny,allow')
  const hemctl = hemctlInProcess(['--url', o.https, '--insecure'], root)
  const onCloud = ['--cloud', cloud.url]

  const paired = await hemctl(['auth', 'pair', ...onCloud, '--wait', '60'])
  t.equal(paired.code, 0, paired.stderr)
  const allowed = await hemctl(['login', '--remote', ...onCloud, '--scope', APPROVED, '--wait', '60'])
  t.equal(allowed.code, 0, allowed.stderr)
  const denied = await hemctl(['login', '--remote', ...onCloud, '--scope', APPROVED, '--wait', '60'])
  t.equal(denied.code, 4, denied.stderr)

  await t.test(
    'a pending authreply read from the buckets wins the race to ext/token (what the device does today)',
    async (t) => {
      const { epk } = (await call(`${cloud.url}/notify/session`)).json as { epk: string }
      const asked = await post(o.base, 'request', { epk, scope: RACED })
      t.equal(asked.status, 200, 'ext/request')
      const event = await postJson(`${cloud.url}/notify/event/new`, { authreq: asked.json.authreq, epk })
      t.equal(event.status, 200, 'event/new')
      const { jti } = payloadOf(asked.json.authreq as string) as { jti: string }
      let stolen: string | undefined
      await until('the authreply in a bucket', async () => {
        stolen = loot(await readEveryBucket(cloudData)).jwts.find(
          ({ parsed }) => parsed.payload.jti === jti && typeof parsed.payload.pid === 'string',
        )?.text
        return stolen !== undefined
      })
      const before = (await readJournal(o.device.dataDir)).records.length
      const theft = await post(o.base, 'token', { authreply: stolen })
      t.equal(theft.status, 200, 'the first to bring the authreply gets the token')
      const scope = JSON.parse(Buffer.from((theft.json.token as string).split('.')[1]!, 'base64url').toString()).scope
      t.equal(scope, RACED, 'only the scope the owner approved')
      const checked = await call(`${cloud.url}/notify/event/check/${event.json.eventid}`)
      t.equal(checked.json.authreply, stolen, 'the client gets the same authreply')
      const mine = await post(o.base, 'token', { authreply: checked.json.authreply })
      t.equal(mine.status, 401, "the client's own exchange is then refused: the approval is spent")
      const records = (await readJournal(o.device.dataDir)).records.slice(before)
      t.ok(
        records.some((r) => r.type === LogType.AUTH_SUCCESS_EXTERNAL),
        'the journal shows the exchange the owner did not make',
      )
    },
  )

  await auto.stop()
  // A request left pending (nobody answers it now): its jti is live in the device's book, the target of forgeries.
  const { epk } = (await call(`${cloud.url}/notify/session`)).json as { epk: string }
  const pending = await post(o.base, 'request', { epk, scope: FORGED_FOR })
  t.equal((await postJson(`${cloud.url}/notify/event/new`, { authreq: pending.json.authreq, epk })).status, 200)

  const buckets = await readEveryBucket(cloudData)
  const found = loot(buckets)
  const now = Math.floor(Date.now() / 1000)
  const subscriber = found.all
    .map((text) => /"pid":"([^"]+)","eid":"([^"]+)","aid":"([^"]+)"/.exec(text))
    .find((m) => m !== null)
  t.ok(subscriber, 'the subscriber record names pid, eid and aid')
  const [, pid, eid, aid] = subscriber!
  const publics = [decodeBase64(eid!)!, decodeBase64(aid!)!]
  const candidates = dedupe([...found.keys, ...brokerSecrets(found.binary, publics, now)])
  const appJwts = found.jwts.filter(({ text }) =>
    text.startsWith(Buffer.from(EXT_JWT_APP_HEADER).toString('base64url')),
  )
  const served = decodeBase64(epk)!
  t.ok(
    found.binary.some((master) => sameBytes(new SessionKeys(master).issue('anonymous', NO_SUBJECT, now).epk, served)),
    "the broker's master secret is among the values: the key it serves derives from one",
  )
  t.ok(appJwts.length > 0, 'the authreplies are there')
  t.ok(found.sealed.length > 0 && found.jtis.length > 0, 'the sealed scope entries and their jtis are there')
  t.comment(
    `buckets ${buckets.size}, values ${[...buckets.values()].reduce((n, v) => n + v.size, 0)}, eJWTs ` +
      `${found.jwts.length} (${appJwts.length} the app's), 32-byte candidates ${candidates.length}, ` +
      `sealed entries ${found.sealed.length}, jtis ${found.jtis.length}`,
  )

  await t.test('no scope, in clear or in any decoding', async (t) => {
    for (const scope of [APPROVED, RACED, FORGED_FOR])
      t.notOk(
        found.all.some((text) => text.includes(scope)),
        `${scope} is in no key, no value, no decoded value`,
      )
  })

  await t.test('no value found opens a sealed scope entry, as S_pair, as K, or through the master', async (t) => {
    let opened = 0
    for (const entry of found.sealed)
      for (const key of candidates)
        for (const jti of found.jtis)
          if (openScope(entry, key, jti) !== undefined || openScope(entry, scopeKey(key, jti), jti) !== undefined)
            opened++
    t.equal(opened, 0)
  })

  await t.test("no value found is the key of the app's MACs (S_pair)", async (t) => {
    const signing = appJwts.filter(({ parsed }) => candidates.some((key) => extJwtSigned(parsed, key)))
    t.same(signing, [])
  })

  await t.test('every eJWT found, replayed at ext/token and ext/validate, is refused', async (t) => {
    for (const { text } of found.jwts) {
      const answer = await post(o.base, 'token', { authreply: text })
      t.not(answer.status, 200, `ext/token refuses ${text.slice(0, 24)}…: ${answer.status}`)
    }
    const pairToken = await login(o.base, 'auth:ext:pair')
    t.equal((await post(o.base, 'init', { epk: brokerKey().epk }, pairToken)).status, 200, 'a pairing is open')
    for (const { text } of found.jwts) {
      const answer = await post(o.base, 'validate', { pid, reply: text }, pairToken)
      t.not(answer.status, 200, `ext/validate refuses ${text.slice(0, 24)}…: ${answer.status}`)
    }
  })

  await t.test('an authreply forged with any 32-byte value found (or derived) as its key is refused', async (t) => {
    const { jti } = payloadOf(pending.json.authreq as string) as { jti: string }
    t.ok(
      found.jtis.some((j) => Buffer.from(j).toString('base64') === jti),
      "the pending request's jti is in the buckets",
    )
    const statuses = new Map<number, number>()
    for (const key of candidates) {
      const claims = {
        aud: eid,
        jti,
        exp: now + 900,
        iat: now,
        pid,
        iss: aid,
        scope: sealScope(FORGED_FOR, key, decodeBase64(jti)!),
      }
      const answer = await post(o.base, 'token', { authreply: signExtJwt(claims, key, EXT_JWT_APP_HEADER) })
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    }
    t.same([...statuses.keys()], [401], `all ${candidates.length} refused as unauthorized`)
  })
})
