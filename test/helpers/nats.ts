import { spawn, type ChildProcess } from 'node:child_process'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import type { Test } from 'tap'
import { once } from 'node:events'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export interface ExternalNats {
  url: string
  port: number
  stop(): Promise<void>
}

/**
 * A plain nats-server on loopback, as an operator would run one for `--nats URL`; `config` adds to its configuration.
 */
export async function startNats(dir: string, port = -1, config?: string): Promise<ExternalNats> {
  const args = ['-a', '127.0.0.1', '-p', String(port), '--ports_file_dir', dir]
  if (config !== undefined) {
    const file = join(dir, 'nats-server.conf')
    await writeFile(file, config)
    args.push('-c', file)
  }
  const child = spawn('nats-server', args, { stdio: 'ignore' })
  const portsFile = join(dir, `nats-server_${child.pid}.ports`)
  const deadline = Date.now() + 10_000
  let actual = 0
  while (!actual) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('nats-server did not start')
    const text = await readFile(portsFile, 'utf8').catch(() => '')
    if (text) actual = Number(new URL((JSON.parse(text) as { nats: string[] }).nats[0]!).port)
    else await sleep(20)
  }
  return { url: `nats://127.0.0.1:${actual}`, port: actual, stop: () => stop(child) }
}

/**
 * A nats-server of the test's own (`config` adds to its configuration), and its connections: `open(user)` connects
 * as `user` with the password `<user>-password`, or as nobody; all close as the test ends.
 */
export async function natsBus(
  t: Test,
  config?: string,
): Promise<{ url: string; open(user?: string): Promise<NatsConnection> }> {
  const nats = await startNats(t.testdir(), -1, config)
  t.teardown(() => nats.stop())
  return {
    url: nats.url,
    open: async (user) => {
      const nc = await connect({ servers: nats.url, ...(user ? { user, pass: `${user}-password` } : {}) })
      t.teardown(() => nc.close())
      return nc
    },
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}
