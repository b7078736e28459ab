// POST /api/system/config `tls`: a CA-signed certificate for the device's own key (from the
// `gen_csr` CSR) or for a key sent encrypted to the device; staged, then served after a reboot.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto'
import { connect as tlsConnect, type PeerCertificate } from 'node:tls'
import t from 'tap'
import { wrapTlsKey } from '../client/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { b64 } from './helpers/base64.js'
import { deviceTlsKey } from './helpers/device-tls.js'
import { call, type Answer } from './helpers/http.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { bearer, login, owned, type Owned } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { issue, makeCa, makeIntermediate, pkcs8, type TestCa } from './helpers/x509-fixtures.js'

const fingerprint = (der: Uint8Array) => createHash('sha256').update(der).digest('hex')
const chain = (...ders: Uint8Array[]) => b64(Buffer.concat(ders.map((d) => Buffer.from(d))))

const root = await makeCa('Config Test Root')
const intermediate = await makeIntermediate(root, 'Config Test Intermediate')

function postConfig(o: Owned, body: unknown): Promise<Answer> {
  return call(`${o.base}/api/system/config`, {
    method: 'POST',
    headers: { ...bearer(o.token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** The leaf and the rest of the chain that a TLS 1.3 client receives from the HTTPS port. */
async function served(https: string): Promise<{ leaf: Buffer; issuer: Buffer | undefined }> {
  const url = new URL(https)
  const peer: PeerCertificate & { issuerCertificate?: PeerCertificate } = await new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: url.hostname, port: Number(url.port), rejectUnauthorized: false, minVersion: 'TLSv1.3' },
      () => {
        resolve(socket.getPeerCertificate(true))
        socket.destroy()
      },
    )
    socket.on('error', reject)
  })
  const issuer =
    peer.issuerCertificate && !peer.issuerCertificate.raw.equals(peer.raw) ? peer.issuerCertificate.raw : undefined
  return { leaf: peer.raw, issuer }
}

/** GET /api/system/reboot, then wait until the device is back (the old token dead); a new token. */
async function reboot(o: Owned): Promise<void> {
  const answer = await call(`${o.base}/api/system/reboot`, { headers: bearer(o.token) })
  if (answer.status !== 200) throw new Error(`reboot refused: ${answer.status} ${answer.text}`)
  const old = o.token
  await until(
    'rebooted',
    async () => (await call(`${o.base}/api/system/config`, { headers: bearer(old) })).status === 401,
  )
  o.token = await login(o.base, 'system:config')
}

async function eid(o: Owned): Promise<Uint8Array> {
  const config = await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })
  return new Uint8Array(Buffer.from(config.json.eid, 'base64'))
}

t.test('a CA-signed certificate for the own key (from gen_csr): staged, served after a reboot', async (t) => {
  const o = await owned(t)
  const own = await served(o.https)
  const leaf = await issue(intermediate, await deviceTlsKey(o.base, o.token), 'hem.example')

  const uts = async () => (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).json.uts as number
  const utsBefore = await uts()
  const answer = await postConfig(o, { tls: { crt: chain(leaf, intermediate.cert) } })
  t.equal(answer.status, 200, answer.text)
  t.same(answer.json, { updated: true, reboot_required: true })
  t.ok((await uts()) > utsBefore, 'an import is a change: uts increases')
  t.equal(
    fingerprint((await served(o.https)).leaf),
    fingerprint(own.leaf),
    'the old certificate is served until a reboot',
  )
  t.equal((await call(`${o.https}/api/system/status`)).status, 200, 'HTTPS keeps working')

  const records = (await readJournal(o.device.dataDir)).records.filter(
    (r) => r.type === LogType.CONFIG_UPDATED && r.result === LogResult.OK,
  )
  t.match(records.at(-1)?.decoded, { source: 200, secrets: ['tls'], changed: {} }, 'journaled by name only')

  await reboot(o)
  const now = await served(o.https)
  t.equal(fingerprint(now.leaf), fingerprint(leaf), 'the new certificate after the reboot')
  t.ok(now.issuer && fingerprint(now.issuer) === fingerprint(intermediate.cert), 'with its intermediate')
  t.equal(
    (await call(`${o.https}/api/system/status`)).status,
    200,
    'HTTPS works with it (the own key signs the handshake)',
  )
  t.equal((await verifyDataDir(o.device.dataDir, o.device.logPublicKey, true)).ok, true)

  // Still served after another reboot; a wipeout brings the own certificate back.
  await reboot(o)
  t.equal(fingerprint((await served(o.https)).leaf), fingerprint(leaf), 'kept across reboots')
  t.equal((await postConfig(o, { wipeout: true })).status, 200)
  await until(
    'wiped and rebooted',
    async () =>
      (await call(`${o.base}/api/system/status`)).json.inited === false &&
      (await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })).status === 401,
  )
  t.equal(fingerprint((await served(o.https)).leaf), fingerprint(own.leaf), 'the own certificate after a wipeout')
})

t.test('a fresh key sent encrypted with its certificate (P-256 and RSA)', async (t) => {
  const o = await owned(t)
  const own = await served(o.https)
  for (const kind of ['ec', 'rsa'] as const) {
    const { privateKey } =
      kind === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 2048 })
    const leaf = await issue(intermediate, privateKey, 'hem.example')
    const secret = pkcs8(privateKey)
    const { emp, key } = wrapTlsKey(secret, await eid(o))
    const answer = await postConfig(o, { tls: { crt: chain(leaf, intermediate.cert), key, emp } })
    t.equal(answer.status, 200, `${kind}: ${answer.text}`)
    t.same(answer.json, { updated: true, reboot_required: true })
    t.not(fingerprint((await served(o.https)).leaf), fingerprint(leaf), `${kind}: not served before the reboot`)

    const raw = Buffer.concat((await readJournal(o.device.dataDir)).files.map((f) => Buffer.from(f.bytes)))
    t.equal(raw.indexOf(Buffer.from(secret)), -1, `${kind}: the private key is not in the journal`)
    t.equal(raw.indexOf(Buffer.from(key.split('.')[1]!, 'base64')), -1, `${kind}: nor its ciphertext`)
    t.notOk(raw.toString('latin1').includes(key.split('.')[1]!.slice(0, 40)), `${kind}: nor its base64`)

    await reboot(o)
    t.equal(
      fingerprint((await served(o.https)).leaf),
      fingerprint(leaf),
      `${kind}: the new certificate after the reboot`,
    )
    t.equal(
      (await call(`${o.https}/api/system/status`)).status,
      200,
      `${kind}: the handshake works with the imported key`,
    )
    t.not(fingerprint(leaf), fingerprint(own.leaf))
  }
})

t.test('a later import replaces a staged one', async (t) => {
  const o = await owned(t)
  const key = await deviceTlsKey(o.base, o.token)
  const first = await issue(intermediate, key, 'first.example')
  const second = await issue(root, key, 'second.example')
  t.equal((await postConfig(o, { tls: { crt: chain(first, intermediate.cert) } })).status, 200)
  t.equal((await postConfig(o, { tls: { crt: chain(second) } })).status, 200)
  await reboot(o)
  t.equal(fingerprint((await served(o.https)).leaf), fingerprint(second), 'the last one staged')
})

t.test('tls refusals: a key that does not match → 406, garbage → 400; nothing is staged', async (t) => {
  const o = await owned(t)
  const own = await served(o.https)
  const deviceEid = await eid(o)
  const a = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const b = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const leafA = await issue(intermediate, a.privateKey, 'hem.example')
  const crtA = chain(leafA, intermediate.cert)
  const strangerEid = new Uint8Array(
    Buffer.from(generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!, 'base64url'),
  )

  const refused = async (tls: unknown, status: number, what: string) => {
    const before = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.CONFIG_UPDATED).length
    const answer = await postConfig(o, { user: 'Changed', tls })
    t.equal(answer.status, status, `${what}: ${answer.status} ${answer.text}`)
    t.match(answer.json, { error: /^[a-z_]+$/, message: String }, `${what}: JSON error`)
    const records = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.CONFIG_UPDATED)
    if (status === 406)
      t.match(records.at(-1), { result: LogResult.FAILED, decoded: { source: 406 } }, `${what}: journaled FAILED 406`)
    else t.equal(records.length, before, `${what}: nothing journaled for a malformed request`)
  }

  // 406: well formed, but the key does not fit.
  await refused({ crt: crtA, ...wrapTlsKey(pkcs8(b.privateKey), deviceEid) }, 406, 'the certificate of another key')
  await refused({ crt: crtA }, 406, 'no key, and the certificate is not for the own key')
  await refused(
    { crt: crtA, ...wrapTlsKey(pkcs8(a.privateKey), strangerEid) },
    406,
    'a key encrypted for another device',
  )

  // 400: not even well formed.
  const good = wrapTlsKey(pkcs8(a.privateKey), deviceEid)
  for (const [tls, what] of [
    ['garbage', 'a string'],
    [{}, 'no crt'],
    [{ crt: 5 }, 'crt a number'],
    [{ crt: 'not base64 at all!' }, 'crt not base64'],
    [{ crt: b64(Buffer.from('hello world, not DER')) }, 'crt not DER'],
    [{ crt: b64(Buffer.from(leafA).subarray(0, 200)) }, 'crt cut short'],
    [{ crt: crtA, key: 'abc' }, 'key not IV.ciphertext'],
    [{ crt: crtA, key: good.key }, 'key without emp'],
    [{ crt: crtA, key: good.key, emp: b64(randomBytes(16)) }, 'emp too short'],
    [{ crt: crtA, key: `${b64(randomBytes(8))}.${good.key.split('.')[1]}`, emp: good.emp }, 'IV too short'],
  ] as const) {
    await refused(tls, 400, what)
  }
  const config = await call(`${o.base}/api/system/config`, { headers: bearer(o.token) })
  t.equal(config.json.user, 'Ada', 'the user change in the same requests was not applied')

  await reboot(o)
  t.equal(fingerprint((await served(o.https)).leaf), fingerprint(own.leaf), 'nothing was staged')
})
