// The web page's key provider (authenticator/webcrypto-keys.ts): every known answer through WebCrypto under node,
// then in Chromium, where the page (helpers/webcrypto-page.ts, bundled by esbuild, served from 127.0.0.1: a secure
// context) also keeps a key in IndexedDB that the browser will not export and that survives a reload.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import t, { type Test } from 'tap'
import {
  Authenticator,
  fetchTransport,
  MemoryPairingStore,
  WebCryptoKeys,
  type WebCryptoKey,
} from '../authenticator/index.js'
import { FakeBroker, FakeDevice } from './helpers/authenticator-fake-broker.js'
import { noChromium, openPage } from './helpers/browser.js'
import { vectorChecks, type VectorCheck } from './helpers/authenticator-vectors.js'
import type { HemTestPage } from './helpers/webcrypto-page.js'

const read = (name: string) => JSON.parse(readFileSync(new URL(`vectors/${name}`, import.meta.url), 'utf8'))
const V1 = read('ext-auth-v1.json').vectors
const DEVICE = read('ext-authreq-device.json')
/** Any valid X25519 public key: the vectors' manager key. */
const PEER: string = V1.x25519[1].peer_public

t.test('every vector through WebCrypto under node', async (t) => {
  for (const { name, actual, expected } of await vectorChecks(new WebCryptoKeys(), V1, DEVICE))
    t.same(actual, expected, name)
})

t.test('a generated aid_prv is non-extractable, and so is one imported from a seed', async (t) => {
  const keys = new WebCryptoKeys()
  const fresh = await keys.generate()
  t.equal(fresh.handle.extractable, false, 'generated non-extractable')
  t.equal(fresh.handle.type, 'private', 'the handle is the private key')
  await t.rejects(crypto.subtle.exportKey('pkcs8', fresh.handle), 'the browser gives no bytes of it')
  t.equal(fresh.key.aid.length, 32)
  const seeded = await keys.fromSeed(new Uint8Array(32).fill(9))
  t.equal(seeded.handle.extractable, false, 'a key imported for the vectors is non-extractable too')
})

t.test('the flows over WebCrypto keys: pair, approve, unpair, as the broker and the device check them', async (t) => {
  const broker = await new FakeBroker().start()
  t.teardown(() => broker.stop())
  const store = new MemoryPairingStore<WebCryptoKey>()
  const authenticator = new Authenticator({
    transport: fetchTransport(),
    store,
    keys: new WebCryptoKeys(),
    random: (length) => crypto.getRandomValues(new Uint8Array(length)),
    now: () => broker.now(),
    sleep: async () => undefined,
    label: 'Web authenticator (tap)',
  })
  const device = new FakeDevice()
  const pairing = await authenticator.accept(await authenticator.offer({ link: broker.register(device).link }))
  t.equal((await store.list())[0]?.aidKey.extractable, false, 'the store keeps a non-extractable CryptoKey')
  const { eventId, jti } = broker.event(device, 'storage:disk0', [pairing.pid])
  const [pending] = await authenticator.pendingEvents()
  const approval = pending && (await authenticator.open(pending))
  if (!approval) throw new Error('the event did not open')
  await authenticator.allow(approval, 900, true)
  const answer = broker.events.get(eventId)
  t.equal(answer?.state, 'allowed', 'the broker checked the mac and claims')
  const aid = new Uint8Array(Buffer.from(pairing.aid, 'base64'))
  t.equal(device.openAuthreply(answer!.answer!.authreply!, aid, jti).scope, 'storage:disk0:rw', 'the device opens it')
  await authenticator.unpair(pairing.pid)
  t.notOk(broker.subscribers.has(pairing.pid), "the broker took the unpair's proof")
})

/** The page's bundle, served with a page that loads it. */
async function servePage(t: Test): Promise<string> {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('helpers/webcrypto-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'warning',
  })
  const script = bundle.outputFiles[0]!.contents
  const server = createServer((request, response) => {
    if (request.url === '/page.js')
      return void response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script)
    if (request.url !== '/') return void response.writeHead(404).end()
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
    response.end(
      '<!doctype html><html lang="en"><title>WebCrypto vectors</title><script src="/page.js"></script></html>',
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

t.test('in Chromium: the vectors, then a key in IndexedDB across a reload', { skip: noChromium }, async (t) => {
  const url = await servePage(t)
  const { page, problems } = await openPage(t)
  await page.goto(url)
  t.equal(
    await page.evaluate(() => (globalThis as unknown as { isSecureContext: boolean }).isSecureContext),
    true,
    'a secure context, as WebCrypto X25519 needs',
  )
  const checks: VectorCheck[] = await page.evaluate(
    ([v1, device]) => (globalThis as unknown as { hemTest: HemTestPage }).hemTest.vectors(v1, device),
    [V1, DEVICE] as const,
  )
  t.ok(checks.length >= 30, `${checks.length} checks ran in the page`)
  for (const { name, actual, expected } of checks) t.same(actual, expected, `Chromium: ${name}`)

  const database = 'hem-authenticator-tap'
  const kept = await page.evaluate(
    ([db, peer]) => (globalThis as unknown as { hemTest: HemTestPage }).hemTest.keep(db, peer),
    [database, PEER] as const,
  )
  const refused = ['pkcs8: InvalidAccessError', 'jwk: InvalidAccessError', 'raw: InvalidAccessError']
  t.same(
    { extractable: kept.extractable, exported: kept.exported },
    { extractable: false, exported: refused },
    'the stored key is non-extractable: exportKey rejects in every format',
  )
  await page.reload()
  const again = await page.evaluate(
    ([db, peer]) => (globalThis as unknown as { hemTest: HemTestPage }).hemTest.reopen(db, peer),
    [database, PEER] as const,
  )
  t.same(
    again.listed.map((pairing) => Object.keys(pairing).sort()),
    [['aid', 'baseUrl', 'created', 'eid', 'label', 'pid']],
    "the face's pairings() lists it, without its key",
  )
  t.equal(again.listed[0]?.aid, kept.aid, 'the same aid')
  t.equal(again.mac, kept.mac, 'the reloaded key agrees as before the reload')
  t.same(
    { extractable: again.extractable, exported: again.exported },
    { extractable: false, exported: refused },
    'and so after the reload',
  )
  t.same(
    { localStorage: again.localStorage, cookie: again.cookie },
    { localStorage: 0, cookie: '' },
    'nothing else kept',
  )
  t.same(problems, [], 'no page error')
})
