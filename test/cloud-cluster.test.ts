// docs/operations.md's 3-node JetStream cluster, run as written (its placeholders filled in, three
// nats-servers on loopback), with two hem-cloud instances joined to it with R3 buckets: they share the
// registry and the broker's master secret, and the state outlives the loss of one server.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import t from 'tap'
import { masterSecret, type RunningCloud } from '../cloud/index.js'
import { startCloudCluster } from './helpers/cloud-cluster.js'
import { call } from './helpers/http.js'
import { until } from './helpers/until.js'

const PASSWORD = randomBytes(12).toString('hex')

/** A check-in statement for `devid` signed by `key`, naming its public half as eid_sign. */
function statement(devid: string, key: KeyObject): string {
  const raw = Buffer.from((key.export({ format: 'jwk' }) as { x: string }).x, 'base64url')
  const claims = { devid, nonce: randomBytes(32).toString('base64'), iat: 1, eid: raw.toString('base64') }
  const text = Buffer.from(JSON.stringify({ ...claims, eid_sign: raw.toString('base64') })).toString('base64url')
  return `${text}.${sign(null, Buffer.from(text), key).toString('base64url')}`
}

const checkin = (cloud: RunningCloud, check: string) =>
  call(`${cloud.url}/checkin`, { method: 'POST', body: JSON.stringify({ check }) })

t.test('two instances on a 3-node cluster with R3 buckets share the state and survive a lost server', async (t) => {
  const cluster = await startCloudCluster(t, t.testdir(), PASSWORD)
  for (const node of cluster.nodes) t.notMatch(node.config, /<[A-Z_0-9]+>/, 'every placeholder filled')
  const a = await cluster.cloud()
  const b = await cluster.cloud()

  t.same(await masterSecret(a.state), await masterSecret(b.state), 'one master secret for both instances')
  const device = generateKeyPairSync('ed25519').privateKey
  const stranger = generateKeyPairSync('ed25519').privateKey
  const devid = '0123456789abcdef'
  t.equal((await checkin(a, statement(devid, device))).status, 200, 'pinned through one instance')
  t.equal((await checkin(b, statement(devid, stranger))).status, 401, 'the other knows the pin')

  await cluster.nodes[0]!.kill()
  await until('the cluster answers without its first server', async () => {
    return (await checkin(b, statement(devid, device))).status === 200
  })
  t.equal((await checkin(a, statement(devid, stranger))).status, 401, 'the pin outlives a lost server')
})
