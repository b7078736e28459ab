import { randomBytes } from 'node:crypto'
import { mkdir, writeFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsUserCredentials } from '../bus/nats-config.js'
import { renderNatsConfig } from '../bus/nats-config.js'
import { NatsServer } from '../bus/nats-server.js'
import { services } from '../bus/services.js'
import { Subjects } from '../bus/subjects.js'

export interface OwnBus {
  server: NatsServer
  url: string
  credentials: ReadonlyMap<string, NatsUserCredentials>
}

export interface OwnBusOptions {
  devid: string
  runDir: string
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void
  onRestart?: (pid: number) => void
}

/**
 * Starts the device's own nats-server on loopback, with fresh per-boot passwords for every
 * service. The port is chosen by nats-server once and then pinned, so that a restarted
 * server comes back where the clients are reconnecting to.
 */
export async function startOwnBus(o: OwnBusOptions): Promise<OwnBus> {
  const natsDir = join(o.runDir, 'nats')
  await mkdir(natsDir, { recursive: true, mode: 0o700 })
  const credentials = new Map(
    services.map((s) => [s.name, { user: s.name, pass: randomBytes(24).toString('base64url') }] as const),
  )
  const configFile = join(natsDir, 'nats-server.conf')
  const render = (port: number) =>
    renderNatsConfig({ host: '127.0.0.1', port, portsFileDir: natsDir, subjects: new Subjects(o.devid), services, credentials })
  await writePrivate(configFile, render(-1))
  const server = await NatsServer.start({
    configFile,
    portsFileDir: natsDir,
    restart: true,
    ...(o.onExit ? { onExit: o.onExit } : {}),
    ...(o.onRestart ? { onRestart: o.onRestart } : {}),
  })
  await writePrivate(configFile, render(server.port))
  return { server, url: server.url, credentials }
}

async function writePrivate(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`
  await writeFile(tmp, text, { mode: 0o600 })
  await rename(tmp, file)
}
