// Issue 38 item 4: pairing (Sequence A) and approval (Sequence B) against a real device complete while the node of
// the 3-node cluster that hem-cloud is connected to is killed (SIGKILL) between two steps, and again once it is back.
// What a node loss costs a waiting approval, from the kill to the cloud's next answer, is printed as a comment.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import t from 'tap'
import { BrokerClient } from '../client/index.js'
import { startCloudCluster } from './helpers/cloud-cluster.js'
import {
  approvalSteps,
  pairingSteps,
  runSteps,
  tokenScope,
  type FlowOutcome,
  type OwnerParties,
} from './helpers/cloud-cluster-flows.js'
import { TestApp } from './helpers/notify-parties.js'
import { ownerClient, owned } from './helpers/owner.js'

const SCOPE = 'system:config'

t.test('a node killed mid-flow', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { dataDir: join(root, 'device') })
  const cluster = await startCloudCluster(t, join(root, 'cluster'), randomBytes(12).toString('hex'))
  const cloud = await cluster.cloud()
  const parties: OwnerParties = {
    device: ownerClient(o.https),
    broker: new BrokerClient({ url: cloud.url }),
    cloudUrl: cloud.url,
    phone: new TestApp(),
  }
  const out: Partial<FlowOutcome> = {}
  await runSteps(pairingSteps(parties, out), async (done) => {
    t.comment(`done ${done.name} ${Date.now()}`)
    if (done.name !== 'POST /notify/register/init') return
    const node = await cluster.nodeOf('hem-cloud')
    t.comment(`killing node ${node.n}`)
    await node.kill()
  })
  t.pass('paired')
  await runSteps(approvalSteps(parties, out, SCOPE), async (done) => t.comment(`done ${done.name} ${Date.now()}`))
  t.equal(tokenScope(out.token!), SCOPE)
})
