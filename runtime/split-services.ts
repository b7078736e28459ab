import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import {
  encodeTrustAnchors,
  prepareDataDirAccess,
  type Hal,
  type SlotName,
  type TrustAnchorName,
} from '../hal/index.js'
import type { NatsUserCredentials } from '../bus/index.js'
import { deviceServices, type DeviceService, mirrorSettings, type ServiceContext } from './run-service.js'
import { HEMD_NODE_FLAGS } from './node-flags.js'
import { SETPRIV, setprivArgs, uidSeparation, type ServiceAccount } from './service-accounts.js'
import type { DeviceOptions, MirrorSettings, StartedServices } from './types.js'

/** What the supervisor tells a service process over IPC (never argv or env: it holds a password). */
export interface ServiceChildConfig extends Pick<
  ServiceContext,
  'http' | 'https' | 'tls' | 'nbd' | 'temperatureRange' | 'diag' | 'factoryWebroot'
> {
  service: DeviceService
  variant: 'P' | 'E'
  dataDir: string
  natsUrl: string
  credentials?: NatsUserCredentials
  booted?: { slot: SlotName; trial: boolean }
  /** The installation's trust anchors (base64: IPC carries JSON). */
  trust: Record<TrustAnchorName, string>
  /** The eventstore's: mirror the journal to the fleet backend, as the `mirror` bus user. */
  mirror?: MirrorSettings & { credentials: NatsUserCredentials }
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
  const separation = await uidSeparation(o.serviceUids)
  if (separation.separate) {
    await searchableByAll(o.dataDir)
    await makeSealingKeys(hal)
    await prepareDataDirAccess(o.dataDir, separation.dataDir, hal.variant)
  } else {
    o.logger.warn(
      { reason: separation.reason },
      'no uid separation: every service process runs as this user and can read every file of the device',
    )
  }
  /**
   * The files the gateway serves (it opens no enclave), read as it starts: after auth, which erases
   * a former owner's TLS material in its own process when a wipeout did not finish.
   */
  const gatewayFiles = async (): Promise<{ certFile: string; keyFile: string }> => {
    if (!tls) await hal.enclave.activateStagedTls()
    if (separation.separate) return gatewayTls(hal, tls, separation.accounts.get('gateway')!)
    const { certFile, keyFile } = tls ?? hal.enclave.tlsCredentials()
    return { certFile, keyFile }
  }
  const accountOf = (service: DeviceService) => (separation.separate ? separation.accounts.get(service) : undefined)
  const start = async (config: ServiceChildConfig) => {
    // What a service wrote since the last start is its own alone: make it readable again by those that need it.
    if (separation.separate) await prepareDataDirAccess(o.dataDir, separation.dataDir, hal.variant)
    return startChild(config, accountOf(config.service))
  }
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
      .then(() => (closing ? undefined : start(config)))
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
        trust: encodeTrustAnchors(o.trust),
        logLevel: o.logger.level,
        ...(credentials?.get(service) ? { credentials: credentials.get(service)! } : {}),
        ...(service === 'gateway' && o.http ? { http: o.http } : {}),
        ...(service === 'gateway' && o.https ? { https: o.https } : {}),
        ...(service === 'gateway' ? { tls: await gatewayFiles() } : {}),
        ...(service === 'storage' && o.nbd ? { nbd: o.nbd } : {}),
        ...(o.booted ? { booted: o.booted } : {}),
        ...(service === 'system' && o.temperatureRange ? { temperatureRange: o.temperatureRange } : {}),
        ...(o.diag ? { diag: true } : {}),
        ...(service === 'upgrade' && o.factoryWebroot ? { factoryWebroot: o.factoryWebroot } : {}),
        ...(service === 'eventstore' && o.backend && credentials?.get('mirror')
          ? { mirror: { ...mirrorSettings(o.backend), credentials: credentials.get('mirror')! } }
          : {}),
      }
      const { child, ready } = await start(config)
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
  return {
    httpPort: ports.httpPort,
    httpsPort: ports.httpsPort,
    stop,
    uidSeparation: separation.separate ? 'on' : separation.reason,
  }
}

/** Children the supervisor is stopping on purpose: their exit is not a crash. */
const stopping = new WeakSet<ChildProcess>()

async function startChild(
  config: ServiceChildConfig,
  account: ServiceAccount | undefined,
): Promise<{ child: ChildProcess; ready: { httpPort?: number; httpsPort?: number } }> {
  // hemd's own flags, whatever started the supervisor: not the loaders a test harness hooked into this
  // process, which a service's own user could not even read (a harness's coverage goes by the environment).
  const child = fork(hemdBinary, ['--service', config.service], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // setpriv drops to the service's user before Node starts: the process never holds root.
    ...(SETPRIV
      ? { execPath: SETPRIV, execArgv: [...setprivArgs(account), process.execPath, ...HEMD_NODE_FLAGS] }
      : { execArgv: [...HEMD_NODE_FLAGS] }),
  })
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

/**
 * The enclave makes a sealing key on first use, as the process that seals first: here, before
 * any service runs, so that each key belongs to its service from the start (the disks' key is
 * first used by auth, which formats the disks, but it is the storage's).
 */
async function makeSealingKeys(hal: Hal): Promise<void> {
  const purposes = hal.disks ? (['keys', 'disks'] as const) : (['keys'] as const)
  for (const purpose of purposes) await hal.enclave.sealer(purpose).seal(new Uint8Array(0), new Uint8Array(0))
}

/** Service users reach the data dir only if every directory above it lets others through. */
async function searchableByAll(dataDir: string): Promise<void> {
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0)
      throw new SplitServicesError(`the service users cannot reach the data dir: ${dir} is not searchable by others`)
    if (dir === dirname(dir)) return
  }
}

/**
 * The certificate and key the gateway serves, copied where only the gateway's user reads them:
 * the enclave (the device's own pair) and an operator's files are not the gateway's to open.
 */
async function gatewayTls(
  hal: Hal,
  tls: { certFile: string; keyFile: string } | undefined,
  gateway: ServiceAccount,
): Promise<{ certFile: string; keyFile: string }> {
  const source = tls ?? hal.enclave.tlsCredentials()
  const dir = join(hal.runDir, 'gateway-tls')
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { mode: 0o700 })
  const copy = { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') }
  await writeFile(copy.certFile, await readFile(source.certFile), { mode: 0o600 })
  await writeFile(copy.keyFile, await readFile(source.keyFile), { mode: 0o600 })
  for (const path of [dir, copy.certFile, copy.keyFile]) await chown(path, gateway.uid, gateway.gid)
  return copy
}

export class SplitServicesError extends Error {
  override readonly name = 'SplitServicesError'
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
