// Issue 38 item 6, the faults' fixes in cloud/: every bucket of the broker is made at the cloud's start (an R3 bucket
// cannot be made with a node lost), and a write that finds no quorum is tried again for 8 s, then answered 503
// `unavailable` with Retry-After (before: a 500, or the front's deadline), and served again once the quorum is back.
import { randomBytes } from 'node:crypto'
import { Kvm } from '@nats-io/kv'
import { connect } from '@nats-io/transport-node'
import t from 'tap'
import { BrokerClient } from '../client/index.js'
import { NOTIFY_BUCKETS } from '../cloud/notify/notify-store.js'
import { startCloudCluster } from './helpers/cloud-cluster.js'
import { call } from './helpers/http.js'
import { TestDevice } from './helpers/notify-parties.js'

t.test('the broker buckets at start, then 503 without quorum and 200 once it is back', async (t) => {
  const password = randomBytes(12).toString('hex')
  const cluster = await startCloudCluster(t, t.testdir(), password)
  const cloud = await cluster.cloud()
  const nc = await connect({ servers: cluster.urls.split(','), user: 'hem-cloud', pass: password })
  t.teardown(() => nc.close())
  const made: string[] = []
  for await (const status of new Kvm(nc).list()) made.push(status.bucket)
  for (const { name } of Object.values(NOTIFY_BUCKETS))
    t.ok(made.includes(`hem-cloud-${name}`), `${name} made at start, before any request`)

  const device = new TestDevice()
  const post = (path: string, body: unknown) =>
    call(`${cloud.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  // The device's key of the day, asked while the cluster is whole: a session reads the device's pairings.
  const { epk } = (await post('/notify/session', { eid: device.eid })).json as { epk: string }
  const register = () => {
    const { request } = device.init(epk, Math.floor(Date.now() / 1000))
    return post('/notify/register/init', { epk, eid: device.eid, request })
  }
  t.equal((await register()).status, 200, 'a registration with the three nodes')

  const [first, second] = cluster.nodes
  await first!.kill()
  await second!.kill()
  const started = Date.now()
  const refused = await register()
  t.equal(refused.status, 503, 'no quorum: 503')
  t.match(refused.json, { error: 'unavailable' })
  t.equal(refused.headers['retry-after'], '1', 'with Retry-After')
  t.ok(Date.now() - started >= 7_000, 'after trying for 7.5 s, before the front gives up at 10 s')

  await first!.start()
  // The cluster elects its leaders again first (seconds on a loaded host): the owner's client rides that out by
  // asking a 503 unavailable again after its Retry-After, as it would in the field.
  const { request } = device.init(epk, Math.floor(Date.now() / 1000))
  const served = await new BrokerClient({ url: cloud.url }).registerInit({ epk, eid: device.eid, request })
  t.match(served, { rid: /^[0-9a-f]+$/ }, 'served again once two of three run')
})
