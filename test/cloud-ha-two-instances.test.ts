// Issue 38 item 4: two hem-cloud instances on docs/operations.md's 3-node cluster behind one name (a round-robin TCP
// front, a new connection per request), used in turn: every request of a pairing (Sequence A) and of an approval
// (Sequence B) against a real device reaches the other instance than the request before, and both flows complete.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { pino } from 'pino'
import t from 'tap'
import { BrokerClient } from '../client/index.js'
import { startCloudCluster } from './helpers/cloud-cluster.js'
import {
  approvalSteps,
  fetchOnNewConnection,
  pairingSteps,
  runSteps,
  tokenScope,
  type FlowOutcome,
} from './helpers/cloud-cluster-flows.js'
import { freePort } from './helpers/device.js'
import { TestApp } from './helpers/notify-parties.js'
import { ownerClient, owned } from './helpers/owner.js'
import { startTcpProxy } from './helpers/tcp-proxy.js'

const SCOPE = 'system:config'

t.test('two instances behind one name, in turn within one flow', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { dataDir: join(root, 'device') })
  const cluster = await startCloudCluster(t, join(root, 'cluster'), randomBytes(12).toString('hex'))
  // Each instance's request lines (the route's pattern, at debug), in the order they were served.
  const served: { instance: string; route: string }[] = []
  const logger = (instance: string) =>
    pino({ level: 'debug' }, { write: (line: string) => void served.push({ instance, ...JSON.parse(line) }) })
  const ports = [await freePort(), await freePort()]
  const front = await startTcpProxy(ports.map((port) => ({ host: '127.0.0.1', port })))
  t.teardown(() => front.close())
  const name = `http://127.0.0.1:${front.port}`
  await cluster.cloud({ port: ports[0]!, logger: logger('a'), publicUrl: name })
  await cluster.cloud({ port: ports[1]!, logger: logger('b'), publicUrl: name })

  const parties = {
    device: ownerClient(o.https),
    broker: new BrokerClient({ url: name, fetch: fetchOnNewConnection }),
    cloudUrl: name,
    phone: new TestApp(),
  }
  const out: Partial<FlowOutcome> = {}
  const steps = [...pairingSteps(parties, out), ...approvalSteps(parties, out, SCOPE)]
  await runSteps(steps)
  t.equal(tokenScope(out.token!), SCOPE, 'paired, then approved')

  const requests = served.filter((line) => line.route !== undefined)
  t.same(
    requests.map((r) => r.route),
    [
      'POST /notify/session',
      'POST /notify/register/init',
      'GET /notify/register/challenge/:rid',
      'POST /notify/register/challenge/:rid',
      'GET /notify/register/check/:rid',
      'POST /notify/register/finalise/:rid',
      'GET /notify/session',
      'POST /notify/event/new',
      'POST /notify/event/data/allbypid',
      'GET /notify/event/data/:eventid/:pidx',
      'POST /notify/event/data/:eventid/:pidx',
      'GET /notify/event/check/:eventid',
    ],
    "every step of both sequences reached the cloud, once, in the contract's order",
  )
  const repeats = requests.filter((r, i) => i > 0 && r.instance === requests[i - 1]!.instance)
  t.same(repeats, [], 'each request went to the other instance than the one before')
  t.same(new Set(requests.map((r) => r.instance)), new Set(['a', 'b']), 'both instances served')
})
