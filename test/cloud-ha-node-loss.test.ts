// Issue 38 item 4: a pairing (Sequence A) and an approval (Sequence B) against a real device complete while the node
// of docs/operations.md's 3-node cluster (R3 buckets) that hem-cloud is connected to is killed (SIGKILL) between two
// steps, and again once it is back. What a node loss costs a waiting approval, from the kill to the cloud's next
// answer to the client's poll, is printed as a comment (docs/ext-auth.md, "A cloud on a cluster").
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { BrokerClient } from '../client/index.js'
import { startCloudCluster, type CloudCluster } from './helpers/cloud-cluster.js'
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
import { until } from './helpers/until.js'

const SCOPE = 'system:config'

/**
 * The worst loss: the node hem-cloud is connected to, made the leader of `bucket` first, killed. Then `poll` (a
 * client's request to the cloud) is made until it is answered. The kill's time, and the seconds to that answer.
 */
async function killConnectedLeader(cluster: CloudCluster, bucket: string, poll: () => Promise<unknown>) {
  const node = await cluster.nodeOf('hem-cloud')
  await cluster.lead(bucket, node)
  const killed = performance.now()
  await node.kill()
  let answered: number | undefined
  await until(`an answer after node ${node.n} was killed`, async () => {
    await poll()
    answered = performance.now()
    return true
  })
  return { killed, seconds: (answered! - killed) / 1000 }
}

const since = (ms: number) => ((performance.now() - ms) / 1000).toFixed(2)

t.test('pairing and approval with the connected node killed mid-flow, then again once it is back', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { dataDir: join(root, 'device') })
  const cluster = await startCloudCluster(t, join(root, 'cluster'), randomBytes(12).toString('hex'))
  const cloud = await cluster.cloud()
  const broker = new BrokerClient({ url: cloud.url })
  const parties = (): OwnerParties => ({
    device: ownerClient(o.https),
    broker,
    cloudUrl: cloud.url,
    phone: new TestApp(),
  })
  const killedNodeReturns = async () => {
    const node = cluster.nodes.find((n) => !n.running())!
    await node.start()
    await until(`node ${node.n} current again`, () => node.healthy())
  }

  const first = parties()
  const paired: Partial<FlowOutcome> = {}
  let killed = 0
  const pairing503 = await runSteps(pairingSteps(first, paired), async (done) => {
    if (done.name === 'phone POST link') t.comment(`the phone's reply written ${since(killed)} s after the kill`)
    if (done.name !== 'POST /notify/register/init') return
    // The client polls register/check while the phone has not answered yet: each answer is 202 pending.
    const loss = await killConnectedLeader(cluster, 'notify-registrations', async () => {
      const state = await broker.registerCheck(paired.rid!)
      if (state.state !== 'pending') throw new Error(`register/check: ${state.state}`)
    })
    killed = loss.killed
    t.comment(`pairing: the client's poll answered ${loss.seconds.toFixed(2)} s after the kill`)
  })
  t.ok(paired.pid, `paired, the node killed after register/init (${pairing503} answer(s) 503, made again)`)
  await killedNodeReturns()

  const approval503 = await runSteps(approvalSteps(first, paired, SCOPE), async (done) => {
    if (done.name === 'phone POST /notify/event/data')
      t.comment(`the approval written ${since(killed)} s after the kill`)
    if (done.name !== 'POST /notify/event/new') return
    // The client polls event/check while the owner has not answered yet: each answer is 202 pending.
    const loss = await killConnectedLeader(cluster, 'notify-events', async () => {
      const state = await broker.eventCheck(paired.eventid!)
      if (state.state !== 'pending') throw new Error(`event/check: ${state.state}`)
    })
    killed = loss.killed
    t.comment(`a node loss cost the waiting approval ${loss.seconds.toFixed(2)} s (the kill to its poll's answer)`)
  })
  t.equal(
    tokenScope(paired.token!),
    SCOPE,
    `approved, the node killed while it waited (${approval503} × 503, made again)`,
  )
  await killedNodeReturns()

  const second = parties()
  const again: Partial<FlowOutcome> = {}
  await runSteps([...pairingSteps(second, again), ...approvalSteps(second, again, 'keymgmt:list')])
  t.not(again.pid, paired.pid, 'another pairing once the node is back')
  t.equal(tokenScope(again.token!), 'keymgmt:list', 'and its approval')
  t.equal((await first.device.extPairings()).length, 2, 'the device holds both pairings')
})
