// Broker session keys (contract §3.4.1): derived per UTC day, good for that day and the next, and of
// three kinds that never stand in for one another.

import t from 'tap'
import { decodeBase64 } from '../protocol/index.js'
import { brokerUnderTest, T0 } from './helpers/notify-broker.js'
import { beginPairing, expectStatus } from './helpers/notify-flows.js'
import { TestApp, TestDevice } from './helpers/notify-parties.js'

const DAY = 86_400

t.test('one key per kind, subject and day; exp is the end of the next day', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const anonymous = await expectStatus(broker.call('GET', '/notify/session'), 200)
  t.equal(decodeBase64(anonymous.epk)?.length, 32)
  t.equal(anonymous.exp, (Math.floor(T0 / DAY) + 2) * DAY)
  const bound = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  t.same(Object.keys(bound).sort(), ['epk', 'exp', 'paired'])
  const byApp = await expectStatus(broker.call('POST', '/notify/session', { aid: app.aid }), 200)
  t.same(Object.keys(byApp).sort(), ['epk', 'exp'])
  t.equal(new Set([anonymous.epk, bound.epk, byApp.epk]).size, 3, 'each kind its own key')
  const other = await expectStatus(broker.call('POST', '/notify/session', { eid: new TestDevice().eid }), 200)
  t.not(other.epk, bound.epk, 'each eid its own key')
  t.equal((await expectStatus(broker.call('GET', '/notify/session'), 200)).epk, anonymous.epk, 'stable in a day')
  broker.clock.now += DAY
  t.not((await expectStatus(broker.call('GET', '/notify/session'), 200)).epk, anonymous.epk, 'a new key each day')
})

t.test('a session body names exactly one well-formed subject', async (t) => {
  const broker = await brokerUnderTest(t)
  const { eid } = new TestDevice()
  for (const body of [{}, { eid: 'AAAA' }, { eid, aid: eid }, { aid: 7 }, [], 'eid']) {
    t.equal((await broker.call('POST', '/notify/session', body)).status, 400, JSON.stringify(body))
  }
})

t.test("a key is good on its day and the next, not after; another instance's keys are the same", async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  const second = await broker.another()
  broker.clock.now += DAY
  const init = (now: number) => ({ epk, eid: device.eid, request: device.init(epk, now).request })
  await expectStatus(second.call('POST', '/notify/register/init', init(broker.clock.now)), 200)
  broker.clock.now += DAY
  const late = await expectStatus(broker.call('POST', '/notify/register/init', init(broker.clock.now)), 401)
  t.equal(late.error, 'unknown_session')
})

t.test('kinds never mix', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const now = broker.clock.now
  const anonymous = (await expectStatus(broker.call('GET', '/notify/session'), 200)).epk
  const eidBound = (await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)).epk
  const aidBound = (await expectStatus(broker.call('POST', '/notify/session', { aid: app.aid }), 200)).epk
  const init = (epk: string) => ({ epk, eid: device.eid, request: device.init(epk, now).request })
  const status = async (path: string, body: unknown) => (await broker.call('POST', path, body)).status
  t.equal(await status('/notify/register/init', init(anonymous)), 401, 'anonymous key at register/init')
  t.equal(await status('/notify/register/init', init(aidBound)), 401, 'aid-bound key at register/init')
  const sameSubject = (await expectStatus(broker.call('POST', '/notify/session', { aid: device.eid }), 200)).epk
  t.not(sameSubject, eidBound, 'the same 32 bytes as aid and as eid: two keys')
  t.equal(await status('/notify/register/init', init(sameSubject)), 401, 'the aid-bound key of the eid bytes')
  const event = await broker.call('POST', '/notify/event/new', device.request(eidBound, 'a', [], now))
  t.match(event, { status: 404, body: { error: 'unknown_session' } }, 'an eid-bound key at event/new')
  const proof = (epk: string) => ({ ...device.mac(epk, now), epk })
  t.equal(await status('/notify/subscribers/list', proof(anonymous)), 401, 'anonymous key as device proof')
  t.equal(await status('/notify/subscribers/list', proof(aidBound)), 401, 'aid-bound key as device proof')
  t.equal(await status('/notify/subscribers/list', proof(eidBound)), 200, 'the eid-bound key is the one')
  const pid = Buffer.alloc(32, 1).toString('base64')
  t.equal(await status('/notify/subscribers/delete', app.unpair(pid, eidBound)), 401, 'eid-bound key as app proof')
  t.equal(await status('/notify/subscribers/delete', app.unpair(pid, anonymous)), 401, 'anonymous key as app proof')
  t.equal(await status('/notify/subscribers/delete', app.unpair(pid, aidBound)), 404, 'aid-bound: proved, no pairing')
})

t.test("another device's eid: its key does not serve this device", async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const other = new TestDevice()
  const { epk } = await beginPairing(broker, other)
  const request = device.init(epk, broker.clock.now).request
  const refused = await expectStatus(
    broker.call('POST', '/notify/register/init', { epk, eid: device.eid, request }),
    401,
  )
  t.equal(refused.error, 'unknown_session')
  const mac = device.mac(epk, broker.clock.now)
  await expectStatus(broker.call('POST', '/notify/subscribers/list', { ...mac, epk }), 401)
})
