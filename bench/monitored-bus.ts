import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BUS_CONFIG_FILE, NatsServer } from '../bus/index.js'
import { GATEWAY_CONNECTION, publishedBy } from './bus-batch.js'
import { HEMD } from './hemd-target.js'

const execFileAsync = promisify(execFile)
/** The bench's own configuration beside bus-config's, which it includes unchanged. */
const MONITORED_CONFIG = 'bench-nats-server.conf'

/** A nats-server configured by `hemd bus-config`, with its monitoring port on. */
export interface MonitoredBus {
  /** The directory `hemd --bus` is given. */
  dir: string
  /** The messages the gateway's connection has published so far (`GET /connz`, its `in_msgs`). */
  gatewayPublished(): Promise<number>
  stop(): Promise<void>
}

/**
 * Writes the bus configuration of the device on `dataDir` into `dir` with `hemd bus-config` (as a
 * board's hemd-bus.service does), then starts nats-server on it with the HTTP monitor on a free
 * loopback port: the bench counts the messages on the bus itself, not from hemd's own figures.
 */
export async function startMonitoredBus(dataDir: string, dir: string): Promise<MonitoredBus> {
  // bus-config wants a fixed port: hemd --bus reads the URL from the credentials file it writes.
  const listen = `127.0.0.1:${await freePort()}`
  await execFileAsync(process.execPath, [HEMD, 'bus-config', '--out', dir, '--data', dataDir, '--listen', listen])
  const configFile = join(dir, MONITORED_CONFIG)
  // Port -1: nats-server picks one and writes it to its ports file, beside the client port.
  await writeFile(configFile, `include ${JSON.stringify(BUS_CONFIG_FILE)}\nhttp: "127.0.0.1:-1"\n`, { mode: 0o600 })
  const server = await NatsServer.start({ configFile, portsFileDir: dir })
  try {
    const monitor = await monitorUrl(dir, server.pid!)
    return {
      dir,
      gatewayPublished: async () => {
        const answer = await fetch(`${monitor}/connz`)
        if (!answer.ok) throw new Error(`nats-server's /connz answered ${answer.status}`)
        return publishedBy(await answer.json(), GATEWAY_CONNECTION)
      },
      stop: () => server.stop(),
    }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** The monitor's URL, from the ports file nats-server writes once every listener is up (NatsServer waited for it). */
async function monitorUrl(dir: string, pid: number): Promise<string> {
  const ports = JSON.parse(await readFile(join(dir, `nats-server_${pid}.ports`), 'utf8')) as { monitoring?: string[] }
  const url = ports.monitoring?.[0]
  if (url === undefined) throw new Error('nats-server reports no monitoring port')
  return url
}

/** A loopback port free now (taken again at once by nats-server). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, resolve)
  })
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
