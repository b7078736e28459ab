import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Hal, SlotName } from '../hal/index.js'
import type { NatsUserCredentials } from '../bus/index.js'
import { deviceServices, type DeviceService, type ServiceContext } from './run-service.js'
import type { DeviceOptions, StartedServices } from './types.js'

/** What the supervisor tells a service process over IPC (never argv or env: it holds a password). */
export interface ServiceChildConfig extends Pick<
  ServiceContext,
  'http' | 'https' | 'tls' | 'nbd' | 'temperatureRange'
> {
  service: DeviceService
  variant: 'P' | 'E'
  dataDir: string
  natsUrl: string
  credentials?: NatsUserCredentials
  booted?: { slot: SlotName; trial: boolean }
  /** The eventstore's: mirror the journal to the fleet backend, as the `mirror` bus user. */
  mirror?: { domain: string; credentials: NatsUserCredentials }
  logLevel: string
}

export type ServiceChildMessage =
  { type: 'ready'; httpPort?: number; httpsPort?: number } | { type: 'failed'; message: string }

const hemdBinary = fileURLToPath(
  import.meta.url.endsWith('.ts')
    ? new URL('../dist/bin/hemd.js', import.meta.url)
    : new URL('../bin/hemd.js', import.meta.url),
)

/** A service that crashes this often within the window is not started again: the device stops (fail closed). */
const MAX_CRASHES = 5
const CRASH_WINDOW_MS = 60_000
/** The first restart is at once (a crash is rare); repeated ones back off, up to this. */
const MAX_RESTART_DELAY_MS = 5_000

/**
 * Starts every service in its own process, in order, each only when the one before is ready.
 * A service process that dies unasked is started again on its own, with the same configuration
 * and the gateway on the ports it had: what it acknowledged is in the journal and its media, from
 * which it rebuilds its state as at boot. `onGiveUp` is told when one keeps crashing.
 */
export async function startSplitServices(
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  credentials: ReadonlyMap<string, NatsUserCredentials> | undefined,
  tls: { certFile: string; keyFile: string } | undefined,
  onGiveUp: (service: DeviceService) => void = () => undefined,
): Promise<StartedServices> {
  const children = new Map<DeviceService, ChildProcess>()
  const restarts = new Set<Promise<void>>()
  let closing = false
  let ports: { httpPort?: number; httpsPort?: number } = {}
  const stop = async () => {
    closing = true
    await Promise.all(restarts)
    for (const child of [...children.values()].reverse()) await stopChild(child)
  }
  const supervise = (config: ServiceChildConfig, child: ChildProcess, crashes: number[]) => {
    children.set(config.service, child)
    child.once('exit', (code, signal) => {
      if (!stopping.has(child) && !closing) crashed(config, crashes, { code, signal })
    })
  }
  const crashed = (config: ServiceChildConfig, crashes: number[], how: Record<string, unknown>) => {
    const now = Date.now()
    const recent = [...crashes.filter((at) => now - at < CRASH_WINDOW_MS), now]
    if (recent.length >= MAX_CRASHES) {
      o.logger.fatal(
        { service: config.service, ...how, crashes: recent.length },
        'service keeps dying: the device stops',
      )
      return onGiveUp(config.service)
    }
    const delay = recent.length === 1 ? 0 : Math.min(100 * 2 ** (recent.length - 2), MAX_RESTART_DELAY_MS)
    o.logger.error({ service: config.service, ...how, restartInMs: delay }, 'service process died; restarting it')
    const restart = sleep(delay)
      .then(() => (closing ? undefined : startChild(config)))
      .then((started) => {
        if (!started) return
        if (closing) return stopChild(started.child)
        supervise(config, started.child, recent)
        o.logger.info({ service: config.service, pid: started.child.pid }, 'service process restarted')
      })
      .catch((err: Error) => {
        if (!closing) crashed(config, recent, { err: err.message })
      })
      .finally(() => restarts.delete(restart))
    restarts.add(restart)
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
        ...(service === 'eventstore' && o.backend && credentials?.get('mirror')
          ? { mirror: { domain: o.backend.domain, credentials: credentials.get('mirror')! } }
          : {}),
      }
      const { child, ready } = await startChild(config)
      if (service === 'gateway') {
        ports = ready
        // A restarted gateway comes back where the clients are.
        if (config.http && ready.httpPort !== undefined) config.http = { ...config.http, port: ready.httpPort }
        if (config.https && ready.httpsPort !== undefined) config.https = { ...config.https, port: ready.httpsPort }
      }
      supervise(config, child, [])
    }
  } catch (err) {
    await stop()
    throw err
  }
  return { httpPort: ports.httpPort, httpsPort: ports.httpsPort, stop }
}

/** Children the supervisor is stopping on purpose: their exit is not a crash. */
const stopping = new WeakSet<ChildProcess>()

async function startChild(
  config: ServiceChildConfig,
): Promise<{ child: ChildProcess; ready: { httpPort?: number; httpsPort?: number } }> {
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
