// docs/operations.md's 3-node JetStream cluster, run as written (its placeholders filled in, three nats-servers of
// the host's nats-server on loopback, each with a monitoring port added so that a test sees who is connected where),
// and hem-cloud instances joined to it with R3 buckets. A node can be killed (SIGKILL) and started again on its
// store: a test of the cloud's faults.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import type { Test } from 'tap'
import { startCloud, type CloudOptions, type RunningCloud } from '../../cloud/index.js'
import { backendKey } from './cloud.js'
import { freePort, repoRoot } from './device.js'
import { call } from './http.js'
import { startBackend, type Backend } from './jetstream-backend.js'
import { silentLogger } from './logger.js'
import { until } from './until.js'

/** The nats-server configuration block of docs/operations.md's cluster section. */
export async function documentedClusterConfig(): Promise<string> {
  const doc = await readFile(join(repoRoot, 'docs/operations.md'), 'utf8')
  const section = doc.split("## The family's cloud on a 3-node JetStream cluster")[1]?.split('\n## ')[0] ?? ''
  const block = /```conf\n([^]*?)```/.exec(section)
  if (!block) throw new Error("docs/operations.md has no configuration block under the family's cloud")
  return block[1]!
}

export interface ClusterNode {
  /** 1, 2 or 3: the `<N>` of the documented configuration. */
  n: number
  /** nats://127.0.0.1:port, its client listener. */
  url: string
  /** The configuration it runs, the placeholders filled in. */
  config: string
  running(): boolean
  /** SIGKILL: no goodbye to its peers nor its clients, the store as the kill left it. */
  kill(): Promise<void>
  /** Starts it again on the same store and ports. */
  start(): Promise<void>
  /** Whether its monitoring port's /healthz says ok: JetStream on it caught up with the cluster. */
  healthy(): Promise<boolean>
  /** The streams whose leader it is, by its monitoring port's /jsz. */
  leads(): Promise<string[]>
  /** The names of the client connections it holds (its monitoring port's /connz). */
  connections(): Promise<string[]>
}

export interface CloudCluster {
  nodes: ClusterNode[]
  /** The three client URLs, comma-separated, as `--nats` takes them (without the credentials). */
  urls: string
  password: string
  /** A hem-cloud joined to the cluster with R3 buckets, stopped at the test's end; retried while JetStream elects. */
  cloud(options?: Partial<CloudOptions>): Promise<RunningCloud>
  /** The node a connection named `name` is on (every hem-cloud's connection is named `hem-cloud`). */
  nodeOf(name: string): Promise<ClusterNode>
  /** Makes `node` the leader of the bucket `bucket` (its stream's leader steps down until that node is elected). */
  lead(bucket: string, node: ClusterNode): Promise<void>
}

/** Three nodes of the documented configuration on loopback, stopped at the test's end. */
export async function startCloudCluster(t: Test, dir: string, password: string): Promise<CloudCluster> {
  const template = await documentedClusterConfig()
  const ports = await Promise.all(Array.from({ length: 9 }, () => freePort()))
  const client = (n: number) => `127.0.0.1:${ports[n - 1]}`
  const route = (n: number) => `127.0.0.1:${ports[n + 2]}`
  const monitor = (n: number) => `127.0.0.1:${ports[n + 5]}`
  const nodes = [1, 2, 3].map((n) => {
    const config = template
      .replaceAll('<N>', String(n))
      .replaceAll('<CLIENT_N>', client(n))
      .replaceAll('<ROUTE_N>', route(n))
      .replace(/<ROUTE_(\d)>/g, (_all, m: string) => route(Number(m)))
      .replaceAll('<STORE_DIR>', join(dir, `js-${n}`))
      .replaceAll('<CLOUD_PASSWORD>', password)
    return clusterNode(n, `nats://${client(n)}`, config, `http://${monitor(n)}`, join(dir, `server-${n}`))
  })
  t.teardown(() => Promise.all(nodes.map((node) => node.kill())))
  await Promise.all(nodes.map((node) => node.start()))
  const urls = nodes.map((node) => node.url).join(',')
  return {
    nodes,
    urls,
    password,
    async cloud(options = {}) {
      const start = () =>
        startCloud({
          host: '127.0.0.1',
          port: 0,
          backendKey,
          store: { nats: { url: urls, user: 'hem-cloud', pass: password }, replicas: 3 },
          testMode: false,
          logger: silentLogger,
          ...options,
        })
      // The cluster elects its JetStream leader after the servers meet: until then the buckets cannot be made.
      let cloud: RunningCloud | undefined
      await until('a hem-cloud starts on the cluster', async () => (cloud = await start()) !== undefined, {
        ms: 60_000,
      })
      t.teardown(() => cloud!.stop())
      return cloud!
    },
    async lead(bucket, node) {
      const stream = `KV_hem-cloud-${bucket}`
      const nc = await connect({ servers: urls.split(','), user: 'hem-cloud', pass: password })
      try {
        await until(`node ${node.n} leads ${stream}`, async () => {
          if ((await node.leads()).includes(stream)) return true
          const leader = await Promise.all(nodes.map(async (n) => ((await n.leads()).includes(stream) ? n : undefined)))
          // Step down only a leader in place: a step-down during an election is refused.
          if (leader.some((n) => n !== undefined)) await nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`)
          return false
        })
      } finally {
        await nc.close()
      }
    },
    async nodeOf(name) {
      for (const node of nodes) if (node.running() && (await node.connections()).includes(name)) return node
      throw new Error(`no node holds a connection named ${name}`)
    },
  }
}

function clusterNode(n: number, url: string, config: string, monitorUrl: string, dir: string): ClusterNode {
  let backend: Backend | undefined
  const [, port] = /:(\d+)$/.exec(monitorUrl)!
  return {
    n,
    url,
    config,
    running: () => backend !== undefined,
    async kill() {
      await backend?.kill()
      backend = undefined
    },
    async start() {
      backend = await startBackend(dir, { config: `${config}\nhttp: "127.0.0.1:${port}"` })
    },
    healthy: async () => (await call(`${monitorUrl}/healthz`)).status === 200,
    async leads() {
      type Jsz = { account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[] }
      const { json } = await call(`${monitorUrl}/jsz?accounts=true&streams=true`)
      const streams = ((json as Jsz).account_details ?? []).flatMap((account) => account.stream_detail ?? [])
      return streams.filter((s) => s.cluster?.leader === `hem-cloud-${n}`).map((s) => s.name)
    },
    async connections() {
      const { json } = await call(`${monitorUrl}/connz`)
      return ((json as { connections?: { name?: string }[] }).connections ?? []).map((c) => c.name ?? '')
    },
  }
}
