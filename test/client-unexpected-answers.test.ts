// The client library against a server in the device's place that answers what no sound device would,
// or what only a device in an odd state does: each answer either keeps the meaning the API gives it
// or ends in a typed error that says what came back; none becomes half a result.
import { readFileSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import {
  ConflictError,
  DeviceFailedError,
  DeviceUnreachableError,
  HemClient,
  UnavailableError,
  UnexpectedAnswerError,
} from '../client/index.js'
import { passphraseKeyFromSeed } from '../client/passphrase-key.js'
import { challenge, recordingClient, recordingDevice, type Answer } from './helpers/recording-device.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'

const kid = 'a'.repeat(32)
const b64 = (data: Uint8Array) => Buffer.from(data).toString('base64')

t.test('a refusal outside the table of statuses, or without a JSON body, is a typed error all the same', async (t) => {
  let answer: Answer = { status: 500, text: 'internal failure' }
  const { url } = await recordingDevice(t, () => answer)
  const client = new HemClient({ url })
  const refused = () => client.status().catch((err: unknown) => err)

  const failed = await refused()
  t.type(failed, DeviceFailedError, 'a status the API does not name: the device failed')
  t.match(failed, { status: 500, code: undefined, body: 'internal failure' })
  t.equal((failed as Error).message, 'GET /api/system/status: the device answered 500', 'no JSON: no reason made up')

  answer = { status: 504, body: { error: 'timeout' } }
  t.match(
    await refused(),
    { status: 504, code: 'timeout', message: /answered 504 \(timeout\)$/ },
    'the code, no message',
  )
  answer = { status: 503 }
  const unavailable = await refused()
  t.type(unavailable, UnavailableError)
  t.match(unavailable, { body: undefined, message: /answered 503$/ }, 'an empty body')
  answer = { status: 409, body: { error: 7, message: 'busy' } }
  const busy = await refused()
  t.type(busy, ConflictError)
  t.match(busy, { code: undefined, message: /answered 409 \(busy\)$/ }, 'an error field that is not text is no code')

  t.equal(
    new DeviceUnreachableError('https://hem.example', { cause: 'refused' }).message,
    'cannot reach the device at https://hem.example: refused',
    'a cause that is not an Error is told as it is',
  )
})

/** A device that hands out `tokens` in turn at each login, and answers every other request with `{}`. */
async function loginDevice(t: Parameters<typeof recordingDevice>[0], tokens: string[]) {
  const { seen, url } = await recordingDevice(t, ({ method, path }) => {
    if (path !== '/api/auth/token') return { status: 200, body: {} }
    if (method === 'GET') return { status: 200, body: challenge }
    return { status: 200, body: { token: tokens.shift() } }
  })
  const logins = () => seen.filter((s) => s.method === 'POST' && s.path === '/api/auth/token').length
  const options = { url, passphrase: 'p', deriveKey: async () => passphraseKeyFromSeed(new Uint8Array(32).fill(7)) }
  return { seen, logins, options }
}

t.test('a token without a readable expiry is kept for the lifetime the client asked for', async (t) => {
  const notANumber = `a.${Buffer.from(JSON.stringify({ exp: 'soon' })).toString('base64url')}.c`
  const { seen, logins, options } = await loginDevice(t, ['opaque', notANumber, 'third'])
  let now = 1000
  const client = new HemClient({ ...options, tokenLifetime: 100, now: () => now })
  const config = async () => (await client.config(), seen.at(-1)!.token)

  t.equal(await config(), 'opaque', 'a token that is no JWT')
  now = 1069
  t.equal(await config(), 'opaque', 'kept until 30 s before the lifetime ends')
  t.equal(logins(), 1)
  now = 1071
  t.equal(await config(), notANumber, 'then renewed')
  now = 1071 + 69
  t.equal(await config(), notANumber, 'an exp that is not a number: the lifetime again')
  now = 1071 + 71
  t.equal(await config(), 'third')
  t.equal(logins(), 3)

  const device = await loginDevice(t, ['opaque'])
  const onSystemClock = new HemClient(device.options)
  await onSystemClock.config()
  await onSystemClock.config()
  t.equal(device.logins(), 1, 'on the system clock too')
})

t.test('keys over several pages; a list that ends before its total ends there', async (t) => {
  const entry = (n: number) => ({ kid: String(n).repeat(32), label: `k${n}` })
  const pages: Record<string, { total: number; list: unknown[] }> = {
    '/api/keymgmt/list/0/15': { total: 3, list: [entry(1), entry(2)] },
    '/api/keymgmt/list/2/15': { total: 3, list: [entry(3)] },
  }
  const { seen, client } = await recordingClient(t, ({ path }) => ({ status: 200, body: pages[path] ?? {} }))
  t.same(await client.allKeys(), [entry(1), entry(2), entry(3)])
  t.same(
    seen.map((s) => s.path),
    ['/api/keymgmt/list/0/15', '/api/keymgmt/list/2/15'],
  )
  // Keys deleted while the pages are read: the total said 4, the last page is empty.
  pages['/api/keymgmt/list/0/15']!.total = 4
  pages['/api/keymgmt/list/2/15'] = { total: 4, list: [entry(3)] }
  pages['/api/keymgmt/list/3/15'] = { total: 4, list: [] }
  t.same(await client.allKeys(), [entry(1), entry(2), entry(3)])

  await client.searchKeys('^AQ==', 15, 5)
  t.match(seen.at(-1), {
    path: '/api/keymgmt/search',
    token: 'keymgmt:search',
    body: { descr: '^AQ==', offset: 15, limit: 5 },
  })
})

t.test('log lists: a page past the last file ends the list; a list not of log file ids is refused', async (t) => {
  const [a, b] = ['0000000a', '0000000b']
  let first: Answer = { status: 200, body: { total: 3, id: [a, b] } }
  const { seen, client } = await recordingClient(t, ({ path }) =>
    path === '/api/logger/list/0' ? first : { status: 404, body: { error: 'not_found' } },
  )
  t.same(await client.logFiles(), [a, b], 'a device that counted one file too many')
  t.same(
    seen.map((s) => s.path),
    ['/api/logger/list/0', '/api/logger/list/2'],
  )
  for (const body of [undefined, { total: 2, id: ['../etc/passwd'] }, { total: 2 ** 21, id: [a] }]) {
    first = { status: 200, body }
    await t.rejects(client.logFiles(), new UnexpectedAnswerError('the device sent a malformed log list'))
  }
  const sent = seen.length
  await t.rejects(client.logFile('../x'), RangeError)
  t.equal(seen.length, sent, 'a file id that is none is not sent')
})

t.test('encrypt and decrypt: the fields an algorithm has, and an answer without its data', async (t) => {
  let answer: Answer = { status: 200, body: { ciphertext: 'AQI=' } }
  const { seen, client } = await recordingClient(t, () => answer)
  const msg = new Uint8Array([1, 2])
  t.same(await client.encrypt({ kid, alg: 'AES128-ECB', msg }), { ciphertext: new Uint8Array([1, 2]) }, 'ECB: no iv')
  const pubkey = new Uint8Array(32).fill(5)
  answer = { status: 200, body: { ciphertext: 'AQI=', iv: 'AwQ=', tag: 'BQY=' } }
  t.same(await client.encrypt({ kid, alg: 'AES128-GCM', msg, pubkey }), {
    ciphertext: new Uint8Array([1, 2]),
    iv: new Uint8Array([3, 4]),
    tag: new Uint8Array([5, 6]),
  })
  t.same(seen.at(-1)!.body, { alg: 'AES128-GCM', kid, msg: 'AQI=', pubkey: b64(pubkey) }, 'the peer for ECDH mode')

  answer = { status: 200, body: { plaintext: 'AQI=' } }
  t.same(await client.decrypt({ kid, alg: 'AES128-ECB', msg }), msg)
  t.same(seen.at(-1)!.body, { alg: 'AES128-ECB', kid, msg: 'AQI=' }, 'no iv, no tag: none sent')
  await client.decrypt({ kid, alg: 'AES128-GCM', msg, iv: new Uint8Array([3, 4]), tag: new Uint8Array([5, 6]) })
  t.match(seen.at(-1)!.body, { iv: 'AwQ=', tag: 'BQY=' })

  answer = { status: 200, body: {} }
  await t.rejects(client.encrypt({ kid, alg: 'AES128-ECB', msg }), UnexpectedAnswerError, 'no ciphertext')
  await t.rejects(client.decrypt({ kid, alg: 'AES128-ECB', msg }), UnexpectedAnswerError, 'no plaintext')
  answer = { status: 200, body: { ciphertext: 'AQI=', iv: 'not base64!' } }
  await t.rejects(client.encrypt({ kid, alg: 'AES128-CBC', msg }), UnexpectedAnswerError, 'an iv that is not base64')
})

t.test('an upload without progress to hear of, and a disk the device does not have', async (t) => {
  const { seen, client } = await recordingClient(t, ({ path }) => ({
    status: 200,
    body: path === '/api/system/status' ? { inited: false } : {},
  }))
  await client.upload('fw', new Uint8Array(100_000))
  t.match(seen.at(-1), { method: 'POST', path: '/api/system/upgrade/upload_fw', token: undefined }, 'fresh: no token')
  const sent = seen.length
  await t.rejects(client.unlockDisk(2 as 0), new RangeError('the device has Disk 0 and Disk 1'))
  t.equal(seen.length, sent)
})

t.test(
  'a CA trusts the certificate of a device named by its host name; a CA and insecure exclude each other',
  async (t) => {
    const dir = t.testdir()
    const [certFile, keyFile] = [join(dir, 'cert.pem'), join(dir, 'key.pem')]
    writeSelfSignedCert('localhost', certFile, keyFile)
    const ca = readFileSync(certFile)
    const device = createHttpsServer({ cert: ca, key: readFileSync(keyFile) }, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end('{"fls_state":0}')
    })
    await new Promise<void>((resolve) => device.listen(0, '127.0.0.1', resolve))
    t.teardown(() => device.close())
    const { port } = device.address() as AddressInfo
    t.same(await new HemClient({ url: `https://localhost:${port}`, ca }).status(), { fls_state: 0 })
    await t.rejects(
      new HemClient({ url: `https://127.0.0.1:${port}`, ca }).status(),
      DeviceUnreachableError,
      'the certificate names localhost, not the address',
    )
    // Port 443 of this host: nothing there, or nothing this CA vouches for.
    await t.rejects(new HemClient({ url: 'https://localhost', ca }).status(), {
      name: 'DeviceUnreachableError',
      url: 'https://localhost',
    })
    t.throws(() => new HemClient({ url: `https://localhost:${port}`, ca, insecure: true }), {
      name: 'RangeError',
      message: 'a CA and insecure exclude each other',
    })
  },
)
