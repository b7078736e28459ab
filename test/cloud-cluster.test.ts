// docs/operations.md's 3-node JetStream cluster, run as written (its placeholders filled in, three
// nats-servers on loopback), with two hem-cloud instances joined to it with R3 buckets: they share the
// registry and the broker's master secret, and the state outlives the loss of one server.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { masterSecret, startCloud, type RunningCloud } from '../cloud/index.js'
import { backendKey } from './helpers/cloud.js'
import { freePort, repoRoot } from './helpers/device.js'
import { call } from './helpers/http.js'
import { startBackend, type Backend } from './helpers/jetstream-backend.js'
import { silentLogger } from './helpers/logger.js'
import { until } from './helpers/until.js'

const PASSWORD = randomBytes(12).toString('hex')

/** The nats-server configuration block of docs/operations.md's cluster section. */
async function documentedConfig(): Promise<string> {
  const doc = await readFile(join(repoRoot, 'docs/operations.md'), 'utf8')
  const section = doc.split("## The family's cloud on a 3-node JetStream cluster")[1]?.split('\n## ')[0] ?? ''
  const block = /```conf\n([^]*?)```/.exec(section)
  if (!block) throw new Error("docs/operations.md has no configuration block under the family's cloud")
  return block[1]!
}

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
  const template = await documentedConfig()
  const dir = t.testdir()
  const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()))
  const client = (n: number) => `127.0.0.1:${ports[n - 1]}`
  const route = (n: number) => `127.0.0.1:${ports[n + 2]}`
  const servers: Backend[] = []
  for (const n of [1, 2, 3]) {
    const config = template
      .replaceAll('<N>', String(n))
      .replaceAll('<CLIENT_N>', client(n))
      .replaceAll('<ROUTE_N>', route(n))
      .replace(/<ROUTE_(\d)>/g, (_all, m: string) => route(Number(m)))
      .replaceAll('<STORE_DIR>', join(dir, `js-${n}`))
      .replaceAll('<CLOUD_PASSWORD>', PASSWORD)
    t.notMatch(config, /<[A-Z_0-9]+>/, 'every placeholder filled')
    const server = await startBackend(join(dir, `server-${n}`), { config })
    servers.push(server)
    t.teardown(() => server.stop())
  }
  const urls = [1, 2, 3].map((n) => `nats://${client(n)}`).join(',')
  const start = () =>
    startCloud({
      host: '127.0.0.1',
      port: 0,
      backendKey,
      store: { nats: { url: urls, user: 'hem-cloud', pass: PASSWORD }, replicas: 3 },
      testMode: false,
      logger: silentLogger,
    })
  // The cluster elects its JetStream leader after the servers meet: until then the buckets cannot be made.
  let a: RunningCloud | undefined
  await until('the first instance starts on the cluster', async () => (a = await start()) !== undefined, {
    ms: 60_000,
  })
  t.teardown(() => a!.stop())
  const b = await start()
  t.teardown(() => b.stop())

  t.same(await masterSecret(a!.state), await masterSecret(b.state), 'one master secret for both instances')
  const device = generateKeyPairSync('ed25519').privateKey
  const stranger = generateKeyPairSync('ed25519').privateKey
  const devid = '0123456789abcdef'
  t.equal((await checkin(a!, statement(devid, device))).status, 200, 'pinned through one instance')
  t.equal((await checkin(b, statement(devid, stranger))).status, 401, 'the other knows the pin')

  await servers[0]!.stop()
  await until('the cluster answers without its first server', async () => {
    return (await checkin(b, statement(devid, device))).status === 200
  })
  t.equal((await checkin(a!, statement(devid, stranger))).status, 401, 'the pin outlives a lost server')
})
