import { join } from 'node:path'
import type { NatsUserCredentials } from './nats-config.js'
import { NatsServer } from './nats-server.js'
import { newBusCredentials, writeBusConfig } from './bus-config.js'

export interface OwnBus {
  server: NatsServer
  url: string
  credentials: ReadonlyMap<string, NatsUserCredentials>
}

export interface OwnBusOptions {
  devid: string
  runDir: string
  /** The fleet backend: its leaf-node URL, and the generation of the stream mirrored to (the mirror's permissions). */
  backend?: { url: string; generation?: number }
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
  const credentials = newBusCredentials()
  const write = (port: number) =>
    writeBusConfig({
      dir: natsDir,
      devid: o.devid,
      host: '127.0.0.1',
      port,
      credentials,
      ...(o.backend ? { backend: o.backend } : {}),
    })
  const configFile = await write(-1)
  const server = await NatsServer.start({
    configFile,
    portsFileDir: natsDir,
    restart: true,
    ...(o.onExit ? { onExit: o.onExit } : {}),
    ...(o.onRestart ? { onRestart: o.onRestart } : {}),
  })
  await write(server.port)
  return { server, url: server.url, credentials }
}
