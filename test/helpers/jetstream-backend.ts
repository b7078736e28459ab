// A fleet backend for the mirror's tests: a nats-server with JetStream in a domain and a leaf-node port.

import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import type { Test } from 'tap'
import { StreamApi } from '../../bus/stream-api.js'
import { freePort } from './device.js'
import { until } from './until.js'

export const DOMAIN = 'hem'

export interface Backend {
  /** The client port's URL. */
  url: string
  stop(): Promise<void>
  /** SIGKILL, and wait for the exit: a server lost without a goodbye. */
  kill(): Promise<void>
}

/**
 * The fleet's nats-server: JetStream in domain `hem`, a leaf-node port for the devices (which advertises
 * `advertise`, a proxy's port, when given); or the configuration `config` (its client port read back).
 */
export async function startBackend(
  dir: string,
  o: { leafPort: number; advertise?: number } | { config: string },
): Promise<Backend> {
  await mkdir(join(dir, 'js'), { recursive: true })
  const file = join(dir, 'backend.conf')
  const config =
    'config' in o
      ? o.config
      : [
          'listen: "127.0.0.1:-1"',
          `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))}, domain: ${DOMAIN} }`,
          // The devices learn the address a backend advertises and reconnect to it: the proxy's.
          `leafnodes { listen: "127.0.0.1:${o.leafPort}"` +
            (o.advertise !== undefined ? `, advertise: "127.0.0.1:${o.advertise}" }` : ' }'),
        ].join('\n')
  await writeFile(file, `${config}\nports_file_dir: ${JSON.stringify(dir)}\n`)
  const child = spawn('nats-server', ['-c', file], { stdio: 'ignore' })
  const portsFile = join(dir, `nats-server_${child.pid}.ports`)
  let url = ''
  await until(
    'the backend nats-server is up',
    async () => {
      if (child.exitCode !== null) throw new Error('the backend nats-server exited')
      const text = await readFile(portsFile, 'utf8').catch(() => '')
      if (text) url = (JSON.parse(text) as { nats: string[] }).nats[0]!
      return url !== ''
    },
    { ms: 10_000 },
  )
  return { url, stop: () => stop(child, 'SIGTERM'), kill: () => stop(child, 'SIGKILL') }
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  await exited
}

/** A backend on a fresh leaf port in `dir`, a connection to it and its JetStream API; stopped at the test's end. */
export async function backendUnderTest(
  t: Test,
  dir: string,
): Promise<{ backend: Backend; leafPort: number; hub: NatsConnection; api: StreamApi }> {
  const leafPort = await freePort()
  const backend = await startBackend(join(dir, 'backend'), { leafPort })
  t.teardown(() => backend.stop())
  const hub = await connect({ servers: backend.url })
  t.teardown(() => hub.close())
  return { backend, leafPort, hub, api: new StreamApi(hub) }
}
