// The client library's broker client against the broker's own routes (cloud/notify on a real JetStream),
// its fetch handing each request to them: what the client sends is what the broker takes, and every
// answer of the broker passes the client's shape checks, through a pairing, an approval, a denial, a
// withdrawal and the device's listing and removal of its pairing.
import t from 'tap'
import { BrokerClient, BrokerRefusedError } from '../client/index.js'
import type { CloudRequest } from '../cloud/index.js'
import { brokerUnderTest, PUBLIC_URL, type BrokerUnderTest } from './helpers/notify-broker.js'
import { dataPath, expectStatus } from './helpers/notify-flows.js'
import { TestApp, TestDevice } from './helpers/notify-parties.js'

/** A fetch that hands the request to the broker's routes and their reply back as a Response. */
function viaRoutes(broker: BrokerUnderTest): typeof fetch {
  return async (input, init = {}) => {
    const { pathname } = new URL(String(input))
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined
    const reply = await broker.call((init.method ?? 'GET') as CloudRequest['method'], pathname, body)
    return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), { status: reply.status })
  }
}

t.test('pairing, approval, denial, withdrawal, listing and removal through BrokerClient', async (t) => {
  const broker = await brokerUnderTest(t)
  const client = new BrokerClient({ url: PUBLIC_URL, fetch: viaRoutes(broker) })
  const device = new TestDevice()
  const app = new TestApp()
  const now = () => broker.clock.now

  const session = await client.deviceSession(device.eid)
  t.equal(session.paired, false)
  const { request } = device.init(session.epk, now())
  const registration = await client.registerInit({ epk: session.epk, eid: device.eid, request })
  t.same(await client.registerCheck(registration.rid), { state: 'pending' })
  await expectStatus(broker.call('POST', new URL(registration.link).pathname, app.reply(request)), 200)
  const replied = await client.registerCheck(registration.rid)
  if (replied.state !== 'replied') throw new Error(`not replied: ${replied.state}`)
  const { pid } = await client.registerFinalise(registration.rid, device.validate(replied.reply))
  t.equal(pid, replied.pid)
  t.equal((await client.deviceSession(device.eid)).paired, true)

  for (const decision of ['allow', 'deny', 'withdraw'] as const) {
    const { epk } = await client.anonymousSession()
    const event = await client.eventNew(device.request(epk, 'system:config', [{ pid, aid: app.aid }], now()))
    t.equal(event.sentcnt, 1, decision)
    t.same(await client.eventCheck(event.eventid), { state: 'pending' })
    const path = dataPath(event.eventid, pid)
    if (decision === 'allow') {
      const data = await expectStatus(broker.call('GET', path), 200)
      const body = app.authreply(data, device.eid, pid, now())
      await expectStatus(broker.call('POST', path, body), 200)
      t.same(await client.eventCheck(event.eventid), { state: 'allowed', pid, authreply: body.authreply })
    } else if (decision === 'deny') {
      await expectStatus(broker.call('DELETE', path), 200)
      t.same(await client.eventCheck(event.eventid), { state: 'denied', pid })
    } else {
      t.equal(await client.eventDelete(event.eventid), 'withdrawn')
      t.same(await client.eventCheck(event.eventid), { state: 'closed', reason: 'withdrawn' })
      t.equal(await client.eventDelete(event.eventid), 'closed')
    }
  }

  const proof = async () => {
    const { epk } = await client.deviceSession(device.eid)
    return { ...device.mac(epk, now()), epk }
  }
  const listed = await client.subscribersList(await proof())
  t.match(listed, [{ pid, aid: app.aid, label: 'Pixel 8 (Android)' }])
  const used = await proof()
  t.same(await client.subscribersDelete({ ...used, pid }), { deleted: pid })
  await t.rejects(client.subscribersList(used), BrokerRefusedError, 'a device proof is good once')
  t.same(await client.subscribersList(await proof()), [])
  await t.rejects(client.subscribersDelete({ ...(await proof()), pid }), { message: /answered 404/ })
})
