import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { Hal, SlotName } from '../../hal/types.js'
import type { NatsUserCredentials } from '../bus/nats-config.js'
import type { NbdListen } from '../storage/nbd-server.js'
import { deviceServices, type DeviceService } from './run-service.js'
import type { StartedServices } from './start-device.js'
import type { DeviceOptions, Endpoint } from './types.js'
import type { TemperatureRange } from '../system/types.js'

/** What the supervisor tells a service process over IPC (never argv or env: it holds a password). */
export interface ServiceChildConfig {
  service: DeviceService
  variant: 'P' | 'E'
  dataDir: string
  natsUrl: string
  credentials?: NatsUserCredentials
  http?: Endpoint
  https?: Endpoint
  tls?: { certFile: string; keyFile: string }
  nbd?: NbdListen
  booted?: { slot: SlotName; trial: boolean }
  temperatureRange?: TemperatureRange
  logLevel: string
}

export type ServiceChildMessage =
  | { type: 'ready'; httpPort?: number; httpsPort?: number }
  | { type: 'failed'; message: string }

const hemdBinary = fileURLToPath(
  import.meta.url.endsWith('.ts') ? new URL('../../dist/bin/hemd.js', import.meta.url) : new URL('../../bin/hemd.js', import.meta.url),
)

/** Starts every service in its own process, in order, each only when the one before is ready. */
export async function startSplitServices(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  credentials: ReadonlyMap<string, NatsUserCredentials> | undefined,
  tls: { certFile: string; keyFile: string } | undefined,
): Promise<StartedServices> {
  const children: ChildProcess[] = []
  let ports: { httpPort?: number; httpsPort?: number } = {}
  const stop = async () => {
    for (const child of children.reverse()) await stopChild(child)
  }
  try {
    for (const service of deviceServices) {
      const config: ServiceChildConfig = {
        service,
        variant: hal.variant,
        dataDir: o.dataDir,
        natsUrl,
        logLevel: o.logger.level,
        ...(credentials?.get(service) ? { credentials: credentials.get(service)! } : {}),
        ...(service === 'gateway' && o.http ? { http: o.http } : {}),
        ...(service === 'gateway' && o.https ? { https: o.https } : {}),
        ...(service === 'gateway' && tls ? { tls } : {}),
        ...(service === 'storage' && o.nbd ? { nbd: o.nbd } : {}),
        ...(o.booted ? { booted: o.booted } : {}),
        ...(service === 'system' && o.temperatureRange ? { temperatureRange: o.temperatureRange } : {}),
      }
      const { child, ready } = await startChild(config)
      children.push(child)
      child.once('exit', (code, signal) => {
        if (!stopping.has(child)) o.logger.error({ service, code, signal }, 'service process died')
      })
      if (service === 'gateway') ports = ready
    }
  } catch (err) {
    await stop()
    throw err
  }
  return { httpPort: ports.httpPort, httpsPort: ports.httpsPort, stop }
}

/** Children the supervisor is stopping on purpose: their exit is not a crash. */
const stopping = new WeakSet<ChildProcess>()

async function startChild(config: ServiceChildConfig): Promise<{ child: ChildProcess; ready: { httpPort?: number; httpsPort?: number } }> {
  const child = fork(hemdBinary, ['--service', config.service], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  child.send(config)
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => [{ type: 'failed', message: `exited with code ${code}` }]),
  ])) as [ServiceChildMessage]
  if (message.type !== 'ready') {
    child.kill('SIGKILL')
    throw new Error(`the ${config.service} process did not start: ${message.message}`)
  }
  return { child, ready: message }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  stopping.add(child)
  const exited = once(child, 'exit')
  child.send({ type: 'stop' })
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}
