// Issue 38 item 4: hem-cloud (its own nats-server in its data dir) stopped and started again between a device's
// approval request and the phone's answer: the event waits in the JetStream buckets, and the flow completes against
// the restarted cloud at the same address, with a real device.
import { join } from 'node:path'
import t from 'tap'
import { BrokerClient } from '../client/index.js'
import { testCloud } from './helpers/cloud.js'
import { approvalSteps, pairingSteps, runSteps, tokenScope, type FlowOutcome } from './helpers/cloud-cluster-flows.js'
import { readEveryBucket } from './helpers/ext-e2e-buckets.js'
import { TestApp } from './helpers/notify-parties.js'
import { ownerClient, owned } from './helpers/owner.js'

const SCOPE = 'system:config'

t.test('hem-cloud restarted between a request and its approval', async (t) => {
  const o = await owned(t, { dataDir: join(t.testdir(), 'device') })
  const cloud = await testCloud(t, { clock: Date.now })
  const url = cloud.cloud.url
  const parties = {
    device: ownerClient(o.https),
    broker: new BrokerClient({ url }),
    cloudUrl: url,
    phone: new TestApp(),
  }
  const out: Partial<FlowOutcome> = {}
  await runSteps(pairingSteps(parties, out))
  const pendingEvent = async () => {
    const events = (await readEveryBucket(cloud.dataDir)).get('hem-cloud-notify-events')
    const event = events?.get(out.eventid!)
    return event && (JSON.parse(Buffer.from(event).toString('utf8')) as { state: string }).state
  }
  await runSteps(approvalSteps(parties, out, SCOPE), async (done) => {
    if (done.name !== 'POST /notify/event/new') return
    t.equal(await pendingEvent(), 'pending', 'the request is an event in the bucket')
    const restarted = await cloud.restart()
    t.equal(restarted.url, url, 'the restarted cloud at the same address')
    t.equal(await pendingEvent(), 'pending', 'the event outlived the restart')
  })
  t.equal(tokenScope(out.token!), SCOPE, 'approved through the restarted cloud')
  t.equal(await pendingEvent(), 'allowed', 'the event is answered in the bucket')
})
