// The authenticator's flows (contract §4.1–§4.3) against a broker that checks what the real one checks of
// it (test/helpers/authenticator-fake-broker.ts), over a real HTTP socket and fetch, with a device's checks.
import { createHash, randomBytes } from 'node:crypto'
import t from 'tap'
import {
  Authenticator,
  BrokerAnswerError,
  fetchTransport,
  MemoryPairingStore,
  NobleKeys,
  PairingError,
  type StoredPairing,
} from '../authenticator/index.js'
import { keySealer } from '../cli/hem-authenticator/passphrase-sealer.js'
import { FakeBroker, FakeDevice } from './helpers/authenticator-fake-broker.js'

async function setup(t: { teardown(fn: () => unknown): void }) {
  const broker = await new FakeBroker().start()
  t.teardown(() => broker.stop())
  const store = new MemoryPairingStore<string>()
  const sleeps: number[] = []
  const random = (length: number) => new Uint8Array(randomBytes(length))
  const authenticator = new Authenticator({
    transport: fetchTransport(),
    store,
    keys: new NobleKeys(keySealer(), random),
    random,
    now: () => broker.now(),
    sleep: async (ms) => void sleeps.push(ms),
    label: 'Test (tap)',
  })
  return { broker, store, sleeps, authenticator, device: new FakeDevice() }
}

async function paired(t: { teardown(fn: () => unknown): void }) {
  const context = await setup(t)
  const { link } = context.broker.register(context.device)
  const pairing = await context.authenticator.accept(await context.authenticator.offer({ link }))
  return { ...context, pairing }
}

const answer = (kind: string, status: number) => ({ name: 'BrokerAnswerError', kind, status }) as unknown as Error

const aidOf = (pairing: StoredPairing) => new Uint8Array(Buffer.from(pairing.aid, 'base64'))

t.test('pair from the QR JSON: the broker accepts the reply and mac, the device its signature', async (t) => {
  const { broker, store, authenticator, device } = await setup(t)
  const { rid, link, request } = broker.register(device)
  const hash = createHash('sha256').update(request).digest('base64')
  const offer = await authenticator.offer({ link, hash, user: 'alice', hostname: 'my.ence.do' })
  t.same(offer.ipinfo, { city: '', country: '', ip: '192.0.2.5' })
  const pairing = await authenticator.accept(offer)
  t.equal(pairing.pid, broker.registrations.get(rid)?.pid, 'the pid the broker assigned')
  t.equal(pairing.eid, Buffer.from(device.eid).toString('base64'))
  t.equal(pairing.baseUrl, broker.base, "the link's base, not the broker's answered url")
  t.equal(pairing.user, 'alice')
  t.same(await authenticator.pairings(), [pairing], 'listed as stored, without its key')
  const [kept] = await store.list()
  t.equal(typeof kept?.aidKey, 'string', 'the store keeps the sealed private key')
  t.notOk('aidKey' in pairing, 'what the flow hands out has no key')
})

t.test("a request that does not match the QR's hash is refused before anything is posted", async (t) => {
  const { broker, authenticator, device } = await setup(t)
  const { link } = broker.register(device)
  const hash = createHash('sha256').update('another request').digest('base64')
  await t.rejects(authenticator.offer({ link, hash }), PairingError)
  t.same(
    broker.requests.filter((r) => r.startsWith('POST')),
    [],
  )
  const ok = await authenticator.offer({ link, hash: 'not_implemented_yet' })
  t.ok(ok.request.jti, 'not_implemented_yet: no check')
})

t.test('an expired request is refused', async (t) => {
  const { broker, authenticator, device } = await setup(t)
  const { link } = broker.register(device, broker.now() - 1)
  await t.rejects(authenticator.offer({ link }), /expired/)
})

t.test('already paired with this device: the link is deleted, no second pairing', async (t) => {
  const { broker, store, authenticator, device } = await paired(t)
  const { rid, link } = broker.register(device)
  await t.rejects(authenticator.offer({ link }), /already paired/)
  t.equal(broker.registrations.get(rid)?.state, 'refused')
  t.equal((await store.list()).length, 1)
  const again = await authenticator.accept(await authenticator.offer({ link: broker.register(device).link }, true))
  t.equal((await store.list()).length, 2, 'pairAgain (the automatic mode) pairs once more')
  t.not(again.aid, (await store.list())[0]?.aid, 'with a fresh aid')
})

t.test('decline deletes the link', async (t) => {
  const { broker, authenticator, device } = await setup(t)
  const { rid, link } = broker.register(device)
  await authenticator.decline(await authenticator.offer({ link }))
  t.equal(broker.registrations.get(rid)?.state, 'refused')
})

t.test('approve: the event opens, the authreply passes the broker and the device', async (t) => {
  const { broker, authenticator, device, pairing } = await paired(t)
  const { eventId, jti } = broker.event(device, 'storage:disk0', [pairing.pid])
  const pending = await authenticator.pendingEvents()
  t.same(pending, [{ eventId, pid: pairing.pid }])
  const approval = await authenticator.open(pending[0]!)
  if (!approval) throw new Error('the event did not open')
  t.equal(approval.opened.scope, 'storage:disk0')
  t.same(approval.opened.event.ipinfo, { ip: '198.51.100.9' })
  t.ok(approval.opened.writeSwitch)
  await authenticator.allow(approval, 3600, true)
  const event = broker.events.get(eventId)!
  t.equal(event.state, 'allowed', 'the broker checked the mac and claims')
  const opened = device.openAuthreply(event.answer!.authreply!, aidOf(pairing), jti)
  t.equal(opened.scope, 'storage:disk0:rw', 'the write switch adds :rw')
  t.equal(opened.claims.exp, (opened.claims.iat as number) + 3600)
  t.same(await authenticator.pendingEvents(), [], 'answered: no longer pending')
})

t.test('deny deletes the event', async (t) => {
  const { broker, authenticator, device, pairing } = await paired(t)
  const { eventId } = broker.event(device, 'system:config', [pairing.pid])
  const [pending] = await authenticator.pendingEvents()
  await authenticator.deny((await authenticator.open(pending!))!)
  t.equal(broker.events.get(eventId)?.state, 'denied')
})

t.test('a scope sealed for another key is refused silently: opened as nothing, nothing answered', async (t) => {
  const { broker, authenticator, device, pairing } = await paired(t)
  const other = new FakeDevice()
  const { eventId } = broker.event(other, 'system:config', [pairing.pid])
  const [pending] = await authenticator.pendingEvents()
  t.equal(await authenticator.open(pending!), undefined)
  t.equal(broker.events.get(eventId)?.state, 'pending')
  t.same(
    broker.requests.filter((r) => r.startsWith('POST /notify/event/data/') && !r.endsWith('allbypid')),
    [],
  )
})

t.test('answers mapped: 404 expired, 410 gone, 401 fatal', async (t) => {
  const { broker, authenticator, device, pairing } = await paired(t)
  const { eventId } = broker.event(device, 'system:config', [pairing.pid])
  const [pending] = await authenticator.pendingEvents()
  const approval = (await authenticator.open(pending!))!
  broker.events.get(eventId)!.state = 'withdrawn'
  await t.rejects(authenticator.allow(approval, 900), answer('gone', 410))
  broker.events.get(eventId)!.state = 'pending'
  broker.events.get(eventId)!.epkPrv = new Uint8Array(randomBytes(32)) // the broker's key no longer matches the mac
  await t.rejects(authenticator.allow(approval, 900), answer('fatal', 401))
  broker.events.delete(eventId)
  await t.rejects(authenticator.deny(approval), answer('expired', 404))
})

t.test('≥ 500 is retried with backoff, then given up', async (t) => {
  const { broker, authenticator, sleeps } = await paired(t)
  broker.failNext = 2
  t.same(await authenticator.pendingEvents(), [])
  t.same(sleeps, [500, 1000], 'two retries, backing off')
  broker.failNext = 10
  const failure = await authenticator.pendingEvents().catch((err: unknown) => err)
  t.ok(failure instanceof BrokerAnswerError && failure.kind === 'unavailable' && failure.status === 503)
  t.same(sleeps.slice(2), [500, 1000, 2000, 4000])
})

t.test('a pairing the broker reports DELETED is forgotten', async (t) => {
  const { broker, store, authenticator, pairing } = await paired(t)
  broker.deletedByDevice.add(pairing.pid)
  t.same(await authenticator.pendingEvents(), [])
  t.same(await store.list(), [])
})

t.test('unpair: an aid-bound proof the broker accepts, then the pairing is forgotten', async (t) => {
  const { broker, store, authenticator, pairing } = await paired(t)
  await authenticator.pushToken(pairing.pid, 'fcm-new-token')
  t.ok(broker.requests.includes('POST /notify/subscribers/token'))
  await authenticator.unpair(pairing.pid)
  t.notOk(broker.subscribers.has(pairing.pid), 'the broker removed the subscriber')
  t.same(await store.list(), [])
  t.same(broker.requests.slice(-2), ['POST /notify/session', 'POST /notify/subscribers/delete'])
  await t.rejects(authenticator.unpair(pairing.pid), /no such pairing/)
})

t.test('the automatic mode finds registrations through register/pending', async (t) => {
  const { broker, authenticator, device } = await setup(t)
  const { rid } = broker.register(device)
  t.same(await authenticator.pendingRegistrations(broker.base), [
    { rid, eid: Buffer.from(device.eid).toString('base64') },
  ])
})
