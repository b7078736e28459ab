// The client library (`hemd/client`) against a real device: every call, the token
// cache and its renewal, typed errors per status, and trust on first use.
import { generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createServer as createTlsServer } from 'node:tls'
import t from 'tap'
import {
  BadRequestError,
  ConflictError,
  DeviceUnreachableError,
  FingerprintMismatchError,
  ForbiddenError,
  HemClient,
  NotAcceptableError,
  NotFoundError,
  PinStore,
  UnauthorizedError,
} from '../client/index.js'
import { fetchJournal, headClaim } from '../audit/index.js'
import { verifyJournal } from '../eventstore/verify-journal.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { readJournal } from './helpers/journal.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'
import { defaultCfg, keys, MASTER_PASS, ownerClient, USER_PASS } from './helpers/owner.js'
import { until } from './helpers/until.js'
import { imageOf } from './helpers/upload.js'

const logins = async (dataDir: string) =>
  (await readJournal(dataDir)).records.filter((r) => r.type === LogType.AUTH_SUCCESS_INTERNAL).length

t.test('the package exports the client as hemd/client', async (t) => {
  const library = (await import('hemd/client')) as Record<string, unknown>
  t.type(library.HemClient, 'function')
  t.type(library.NotFoundError, 'function')
})

t.test('a whole session on P: personalise, keys, ciphers, disks, logs, config, upgrade, reboot', async (t) => {
  const dir = t.testdir({ app: { 'index.html': '<p>client</p>' } })
  const device = await bootDevice(t, { variant: 'P', dataDir: join(dir, 'data') })
  const client = ownerClient(device.httpsUrl!)
  t.match(await client.status(), { inited: false })
  await t.rejects(client.token('system:config'), ConflictError, 'no login before personalisation: 409')
  t.match(
    await new HemClient({ url: device.httpsUrl!, insecure: true }).selftest(),
    { fls_state: 0 },
    'open routes of a fresh device need no passphrase',
  )

  const eid = (await client.json<{ eid: string }>('GET', '/api/auth/init')).eid
  const [user, master] = [await keys.get(USER_PASS, eid), await keys.get(MASTER_PASS, eid)]
  const { masterkey: _m, userkey: _u, ...cfg } = defaultCfg('P', user, master)
  const personalised = await client.personalise({ user: USER_PASS, master: MASTER_PASS }, cfg)
  t.match(personalised, { instanceid: /^[0-9a-f]{32}$/, token: String })
  await t.rejects(
    client.personalise({ user: USER_PASS, master: MASTER_PASS }, cfg),
    NotAcceptableError,
    'a second personalisation: 406',
  )

  t.match(await client.version(), { hwv: /PPA/, fwv: String })
  const config = await client.config()
  t.equal(config.user, 'Ada')
  t.match(await client.setConfig({ user: 'Grace' }), { updated: true })
  t.equal((await client.config()).user, 'Grace')
  await t.rejects(client.setConfig({ ctx: 'many' }), BadRequestError, 'a malformed field: 400')

  const before = await logins(device.dataDir)
  const token = await client.token('keymgmt:list')
  t.equal(await client.token('keymgmt:list'), token, 'a token is cached per scope')
  t.equal(await logins(device.dataDir), before + 1, 'one login for it')

  const descr = new Uint8Array(Buffer.from('payments 2026'))
  const { kid } = await client.createKey({ label: 'pay', type: 'AES256', descr })
  t.match(kid, /^[0-9a-f]{32}$/)
  t.match(await client.getKey(kid), { type: /AES256/ })
  t.match(await client.listKeys(), { total: 1, list: [{ kid, label: 'pay' }] })
  await client.updateKey(kid, 'payments', descr)
  t.same(
    (await client.allKeys()).map((k) => k.label),
    ['payments'],
  )
  t.same(
    (await client.searchKeys(`^${Buffer.from('payments').toString('base64')}`)).list.map((k) => k.kid),
    [kid],
  )
  await client.updateKey(kid, 'payments')
  t.notOk((await client.getKey(kid)).descr, 'an update without descr clears it')
  await client.updateKey(kid, 'payments', descr)
  await t.rejects(client.createKey({ label: 'x', type: 'AES999' }), BadRequestError, 'an unknown type: 400')
  await t.rejects(client.getKey('0'.repeat(32)), NotFoundError, 'an unknown kid: 404')
  t.throws(() => client.getKey('../etc'), RangeError, 'a kid is checked before it is sent')

  const msg = new Uint8Array(Buffer.from('attack at dawn'))
  const aad = new Uint8Array([1, 2, 3])
  const sealed = await client.encrypt({ alg: 'AES256-GCM', kid, msg, aad })
  t.equal(sealed.iv?.length, 16)
  t.equal(sealed.tag?.length, 16)
  t.same(
    Buffer.from(
      await client.decrypt({ alg: 'AES256-GCM', kid, msg: sealed.ciphertext, iv: sealed.iv!, tag: sealed.tag!, aad }),
    ),
    Buffer.from(msg),
  )
  const tampered = Uint8Array.from(sealed.ciphertext, (b, i) => (i === 0 ? b ^ 1 : b))
  await t.rejects(
    client.decrypt({ alg: 'AES256-GCM', kid, msg: tampered, iv: sealed.iv!, tag: sealed.tag!, aad }),
    NotAcceptableError,
    'a tag that does not verify: 406',
  )

  const peer = generateKeyPairSync('x25519')
  const raw = new Uint8Array(peer.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32))
  const { kid: imported } = await client.importKey({ label: 'peer', type: 'CURVE25519', pubkey: raw })
  await t.rejects(
    client.importKey({ label: 'again', type: 'CURVE25519', pubkey: raw }),
    NotAcceptableError,
    'a duplicate import: 406',
  )
  await client.deleteKey(imported)
  await t.rejects(client.deleteKey(imported), NotFoundError)

  await client.unlockDisk(0, 'rw')
  t.match((await client.status()).storage, [/:rw$/, /:-$/])
  await client.lockDisk(0)
  t.match((await client.status()).storage, [/:-$/, /:-$/])

  const files = await client.logFiles()
  t.ok(files.length >= 1)
  // Up to the signed head: the records written after it (the download's own) no signature covers yet.
  const { publicKey, head, files: journal } = await fetchJournal(client)
  t.ok(
    verifyJournal(journal, publicKey, { allowOpenTail: true, heads: [headClaim(head)] }).ok,
    'the log files downloaded verify',
  )
  await t.rejects(client.logFile('ffffffff'), NotFoundError)

  const progress: number[] = []
  const app = await imageOf(join(dir, 'app'), 'ui', 'client-1', ['P'])
  await client.upload('ui', app, (sent) => progress.push(sent))
  t.equal(progress.at(-1), app.length, 'the upload reports its progress to the last byte')
  const polls: string[] = []
  await client.verify('ui', { intervalMs: 20, onPoll: (state) => polls.push(state) })
  t.equal(polls.at(-1), 'verified')
  await client.install('ui')
  t.match(await client.version(), { uis: /^[0-9a-f]{64}$/ })

  t.match(await client.selftest(), { fls_state: 0 })
  const listToken = await client.token('keymgmt:list')
  await rebooting(device.dataDir, client, () => client.reboot())
  t.match(await client.listKeys(), { total: 1 }, 'after a reboot the client logs in again')
  t.not(await client.token('keymgmt:list'), listToken)
})

t.test('a 401 renews the token once; errors carry status and code', async (t) => {
  const device = await bootDevice(t, { variant: 'E', dataDir: t.testdir() })
  const client = ownerClient(device.httpsUrl!)
  await client.personalise(
    { user: USER_PASS, master: MASTER_PASS },
    {
      user: 'Ada',
      email: 'a@example.com',
      hostname: 'hem.example',
      origin: '*',
      trusted_ts: true,
      trusted_backend: false,
      allow_keysearch: false,
    },
  )
  const stale = await client.token('keymgmt:gen')
  // Another program reboots the device: every token dies, this client's cache does not know.
  await rebooting(device.dataDir, client, () => ownerClient(device.httpsUrl!).reboot())
  t.match(await client.createKey({ label: 'k', type: 'AES128' }), { kid: String }, 'the dead token was renewed')
  t.not(await client.token('keymgmt:gen'), stale)

  const forbidden = await client
    .authorized('keymgmt:list', 'POST', '/api/keymgmt/create', { json: { label: 'x', type: 'AES128' } })
    .catch((err: unknown) => err)
  t.type(forbidden, ForbiddenError)
  t.match(forbidden, { status: 403, code: 'forbidden', what: 'POST /api/keymgmt/create' })

  const wrong = new HemClient({
    url: device.httpsUrl!,
    insecure: true,
    passphrase: 'not the passphrase',
    deriveKey: (p, eid) => keys.get(p, eid),
  })
  const refused = await wrong.token('system:config').catch((err: unknown) => err)
  t.type(refused, UnauthorizedError, 'a wrong passphrase: 401')
  t.notMatch(String((refused as Error).message), /not the passphrase/, 'the passphrase is in no error')

  const silent = new HemClient({ url: device.httpsUrl!, insecure: true })
  await t.rejects(silent.token('system:config'), /no passphrase/)
  t.type(await silent.status(), 'object', 'routes without a token need none')

  await t.rejects(new HemClient({ url: 'http://127.0.0.1:9' }).status(), DeviceUnreachableError)
  t.throws(() => new HemClient({ url: 'ftp://device' }), RangeError)
})

// A server that takes the connection and never answers the handshake held a client for ever:
// the request's idle timeout starts only once the TLS socket is up.
t.test('a TLS handshake that never completes is given up at the client timeout', async (t) => {
  const silent = createServer(() => undefined)
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    silent.close()
    silent.unref()
  })
  const { port } = silent.address() as AddressInfo
  const failed = await new HemClient({ url: `https://127.0.0.1:${port}`, insecure: true, timeoutMs: 300 })
    .status()
    .then(
      () => undefined,
      (err: unknown) => err,
    )
  t.type(failed, DeviceUnreachableError)
  t.match(
    (failed as Error).cause,
    { message: 'the device did not complete the TLS handshake' },
    'given up by the handshake timeout, not held',
  )
})

t.test(
  'a connection closed while the certificate is judged is an unreachable device, not a request held',
  async (t) => {
    const dir = t.testdir()
    const [certFile, keyFile] = [join(dir, 'cert.pem'), join(dir, 'key.pem')]
    writeSelfSignedCert('hem.local', certFile, keyFile)
    // A device going down: it completes the handshake, then closes the connection at once.
    const closing = createTlsServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (s) => s.destroy())
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve))
    t.teardown(() => closing.close())
    const { port } = closing.address() as AddressInfo
    // The pin is read only once the client has seen the close, as when a busy device's reboot wins the race.
    const pins = new (class extends PinStore {
      override async get(origin: string) {
        await until('the client saw the close', () => !process.getActiveResourcesInfo().includes('TLSWrap'))
        return super.get(origin)
      }
    })(join(dir, 'known-devices.json'))
    const failed = await new HemClient({ url: `https://127.0.0.1:${port}`, pins }).status().then(
      () => undefined,
      (err: unknown) => err,
    )
    t.type(failed, DeviceUnreachableError)
    t.match((failed as Error).cause, { message: 'the device closed the connection' })
  },
)

t.test(
  'trust on first use: the first certificate is pinned, another one is refused before anything is sent',
  async (t) => {
    const dir = t.testdir()
    const device = await bootDevice(t, { variant: 'E', dataDir: join(dir, 'data') })
    const pins = new PinStore(join(dir, 'hemctl', 'known-devices.json'))
    const origin = new URL(device.httpsUrl!).origin
    const client = new HemClient({ url: device.httpsUrl!, pins })
    t.match(await client.status(), { fls_state: 0 }, 'first use: trusted')
    const pinned = await pins.get(origin)
    t.match(pinned, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
    t.match(
      await new HemClient({ url: device.httpsUrl!, pins }).version(),
      { fwv: String },
      'the same certificate again: trusted',
    )

    const other = Array.from({ length: 32 }, () => 'AB').join(':')
    await pins.set(origin, other)
    const before = (await readJournal(device.dataDir)).records.length
    const mismatch = await new HemClient({ url: device.httpsUrl!, pins, passphrase: USER_PASS })
      .json('GET', '/api/auth/token')
      .catch((err: unknown) => err)
    t.type(mismatch, FingerprintMismatchError)
    t.match(mismatch, { origin, pinned: other, presented: pinned })
    t.equal((await readJournal(device.dataDir)).records.length, before, 'the device saw no request')
    t.ok(await pins.forget(origin))
    t.notOk(await pins.forget(origin), 'nothing left to forget')

    await t.rejects(
      new HemClient({ url: device.httpsUrl! }).status(),
      DeviceUnreachableError,
      'without a pin store, a CA or insecure: the system CAs, which know no device',
    )
  },
)

const startups = async (dataDir: string) =>
  (await readJournal(dataDir)).records.filter((r) => r.type === LogType.STARTUP).length

/** Reboots through `reboot` and waits until the next boot answers. */
async function rebooting(dataDir: string, client: HemClient, reboot: () => Promise<void>): Promise<void> {
  const before = await startups(dataDir)
  await reboot()
  await until(
    'the next boot answers',
    async () => (await startups(dataDir)) > before && (await client.status().catch(() => undefined)) !== undefined,
  )
}
