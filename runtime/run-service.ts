import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { type Journal, readHistory } from '../eventstore/index.js'
import {
  type Gateway,
  gatewayProjections,
  DeviceMetrics,
  IdentityTokens,
  ListenError,
  type MetricsListener,
  scopeAudit,
  startGateway,
  startMetricsListener,
} from '../gateway/index.js'
import { AUTH_RECORD_TYPES, AuthActor, authOperations } from '../actors/auth/index.js'
import {
  closeBus,
  inboxPrefix,
  MetricsSnapshots,
  orderHealth,
  orderSupervisor,
  publishMetrics,
  ReadModelBus,
} from '../bus/index.js'
import type { CryptoEngine, Hal } from '../hal/index.js'
import { EventstoreActor, RemoteJournal } from '../actors/eventstore/index.js'
import { JournalMirror } from '../actors/mirror/index.js'
import type { JournalPort } from '../actors/host/index.js'
import { SystemActor } from '../actors/system/index.js'
import { KeystoreActor } from '../actors/keystore/index.js'
import { LoggerActor } from '../actors/logger/index.js'
import { type NbdListen, StorageActor } from '../actors/storage/index.js'
import { UpgradeActor } from '../actors/upgrade/index.js'
import { concretePort } from './concrete-port.js'
import { everyStep } from './every-step.js'
import { openDeviceJournal } from './device-journal.js'
import type { Endpoint, MirrorSettings } from './types.js'
import type { TemperatureRange } from '../protocol/index.js'

/** The services of a device, in start order. */
export const deviceServices = [
  'eventstore',
  'system',
  'auth',
  'keystore',
  'logger',
  'storage',
  'upgrade',
  'gateway',
] as const
export type DeviceService = (typeof deviceServices)[number]

export interface ServiceContext {
  hal: Hal
  logger: Logger
  firmwareVersion: string
  connect(service: string): Promise<NatsConnection>
  /** The journal when the eventstore runs in this process; otherwise reached over the bus. */
  journal?: JournalPort
  http?: Endpoint
  https?: Endpoint
  tls?: { certFile: string; keyFile: string }
  /** Where the storage service exports unlocked disks over NBD. */
  nbd?: NbdListen
  cryptoEngines?: { native: CryptoEngine; noble: CryptoEngine }
  temperatureRange?: TemperatureRange
  selfTestIntervalMs?: number
  /** The DIAG build: services answer their `diag_*` operations, the gateway the `/api/diag/*` routes. */
  diag?: boolean
  /**
   * Mirror the journal to the fleet backend's JetStream (in this domain, to this generation of the device's
   * stream), on the `mirror` user's connection.
   */
  mirror?: MirrorSettings
  /** The upgrade's: the management app's factory image, installed at a start of a P device that has none. */
  factoryWebroot?: string
  /** The gateway's: the cloud the management app calls (DeviceOptions.appCloud). */
  appCloud?: string
  /** The journal, opened by a one-process boot (the first one while the bus started): the eventstore takes it over. */
  journalOpening?: Promise<Journal>
  /** The gateway's: `hemd --metrics`, the plain-HTTP listener of `GET /metrics` alone (a concrete port). */
  metrics?: Endpoint
  /** A `--split` service process: its metrics travel to the gateway's process on the bus (bus/metrics-feed.ts). */
  split?: boolean
}

export interface RunningService {
  stop(): Promise<void>
  journal?: JournalPort
  gateway?: Gateway
}

export async function runService(name: DeviceService, ctx: ServiceContext): Promise<RunningService> {
  return runners[name](ctx)
}

/**
 * Runs a service on its own bus connection. The connection is closed when the service stops,
 * and also when it fails to start, so that a device that cannot boot leaves nothing behind.
 */
async function connected(
  ctx: ServiceContext,
  service: DeviceService,
  run: (nc: NatsConnection) => Promise<RunningService>,
): Promise<RunningService> {
  const nc = await ctx.connect(service)
  try {
    const running = await run(nc)
    // The gateway's process shows its own instruments itself.
    const unpublish = ctx.split && service !== 'gateway' ? publishMetrics(nc, ctx.hal.devid, service, ctx.logger) : none
    return {
      ...running,
      stop: async () => {
        unpublish()
        try {
          await running.stop()
        } finally {
          // A close seal that cannot be written must not keep the connection, and the process, alive.
          await closeBus(nc)
        }
      },
    }
  } catch (err) {
    await closeBus(nc)
    throw err
  }
}

const none = (): void => undefined

async function runEventstore(ctx: ServiceContext): Promise<RunningService> {
  const { hal } = ctx
  // A service process of --split opens it itself; the history is read in the auth process, so no prefetch.
  const journal = await (ctx.journalOpening ?? openDeviceJournal(hal, ctx.firmwareVersion, ctx.logger, false))
  try {
    return await connected(ctx, 'eventstore', async (nc) => {
      const actor = new EventstoreActor(nc, hal.devid, journal, ctx.logger)
      await actor.start()
      // It reads the journal's files and durable head, so it lives beside the journal's writer.
      const mirror = ctx.mirror && startMirror(ctx, journal, ctx.mirror, actor)
      return {
        journal: actor.port,
        stop: () =>
          everyStep([() => mirror?.stop(), () => actor.stop(), () => journal.close()], (err) =>
            ctx.logger.error({ err: err.message }, 'stopping the eventstore: a step failed'),
          ),
      }
    })
  } catch (err) {
    await journal.close()
    throw err
  }
}

function startMirror(
  ctx: ServiceContext,
  journal: Journal,
  settings: MirrorSettings,
  eventstore: EventstoreActor,
): JournalMirror {
  const { hal } = ctx
  return JournalMirror.start({
    devid: hal.devid,
    variant: hal.variant,
    journal: { media: hal.journal, durable: () => ({ file: journal.fileId, head: journal.head }) },
    signer: hal.enclave.logSigner,
    ...(settings.generation !== undefined ? { generation: settings.generation } : {}),
    onStatus: (status) => eventstore.mirrorChanged(status),
    connect: () => ctx.connect('mirror'),
    domain: settings.domain,
    logger: ctx.logger,
  })
}

/** What of the backend's settings the mirror takes (not the leaf link's URL, which may hold a password). */
export function mirrorSettings({ domain, generation }: MirrorSettings): MirrorSettings {
  return { domain, ...(generation !== undefined ? { generation } : {}) }
}

/** The options every actor takes: its service's own connection, the HAL, the journal and the logger. */
interface ActorBasics {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
}

/** Runs the actor `start` makes as `service`, over its own connection, until stopped. */
function runActor(
  ctx: ServiceContext,
  service: DeviceService,
  start: (basics: ActorBasics) => Promise<{ stop(): Promise<void> }>,
): Promise<RunningService> {
  return connected(ctx, service, async (nc) => {
    const journal = ctx.journal ?? new RemoteJournal(nc, ctx.hal.devid, inboxPrefix(service))
    const actor = await start({ nc, hal: ctx.hal, journal, logger: ctx.logger })
    return { stop: () => actor.stop() }
  })
}

function runSystem(ctx: ServiceContext): Promise<RunningService> {
  return runActor(ctx, 'system', async (basics) => {
    const range = ctx.temperatureRange ? { temperatureRange: ctx.temperatureRange } : {}
    const interval = ctx.selfTestIntervalMs ? { selfTestIntervalMs: ctx.selfTestIntervalMs } : {}
    const actor = new SystemActor({ ...basics, ...range, ...interval, ...diag(ctx) })
    await actor.start()
    return actor
  })
}

function runAuth(ctx: ServiceContext): Promise<RunningService> {
  const { hal } = ctx
  return connected(ctx, 'auth', async (nc) => {
    const journal = ctx.journal ?? new RemoteJournal(nc, hal.devid, inboxPrefix('auth'))
    const history = await readHistory(hal.journal, hal.enclave.logSigner.publicKey, AUTH_RECORD_TYPES)
    if (!history.intact)
      ctx.logger.error(
        { problems: history.problems.slice(0, 3) },
        'the journal does not verify: identity rebuilt from its verified part',
      )
    const actor = new AuthActor(
      {
        nc,
        hal,
        journal,
        history,
        bootIntact: (await journal.status()).intact,
        logger: ctx.logger,
        reboot: () => orderSupervisor(nc, hal.devid, 'reboot', 'wipeout'),
        checkinOrder: (action, rid) => orderHealth(nc, hal.devid, action, rid),
        ...diag(ctx),
      },
      authOperations,
    )
    try {
      await actor.start()
    } catch (err) {
      await actor.stop()
      throw err
    }
    return { stop: () => actor.stop() }
  })
}

function runKeystore(ctx: ServiceContext): Promise<RunningService> {
  return runActor(ctx, 'keystore', (basics) =>
    KeystoreActor.start({ ...basics, ...(ctx.cryptoEngines ? { engines: ctx.cryptoEngines } : {}), ...diag(ctx) }),
  )
}

function runLogger(ctx: ServiceContext): Promise<RunningService> {
  return runActor(ctx, 'logger', async (basics) => {
    const actor = new LoggerActor(basics)
    await actor.start()
    return actor
  })
}

function runStorage(ctx: ServiceContext): Promise<RunningService> {
  return runActor(ctx, 'storage', async (basics) => {
    const actor = new StorageActor({ ...basics, ...(ctx.nbd ? { nbd: ctx.nbd } : {}) })
    await actor.start()
    return actor
  })
}

function runUpgrade(ctx: ServiceContext): Promise<RunningService> {
  return runActor(ctx, 'upgrade', async (basics) => {
    const actor = new UpgradeActor({ ...basics, ...(ctx.factoryWebroot ? { factoryWebroot: ctx.factoryWebroot } : {}) })
    await actor.start()
    return actor
  })
}

/** Only a DIAG build passes the flag on: a normal device's options never carry `diag` at all. */
const diag = (ctx: ServiceContext): { diag?: true } => (ctx.diag ? { diag: true } : {})

const runners: Record<DeviceService, (ctx: ServiceContext) => Promise<RunningService>> = {
  eventstore: runEventstore,
  system: runSystem,
  auth: runAuth,
  keystore: runKeystore,
  logger: runLogger,
  storage: runStorage,
  upgrade: runUpgrade,
  gateway: runGateway,
}

/** How often the gateway picks free ports again when one was taken before it could listen. */
const PORT_ATTEMPTS = 5

function runGateway(ctx: ServiceContext): Promise<RunningService> {
  return connected(ctx, 'gateway', async (nc) => {
    const bus = new ReadModelBus({
      nc,
      devid: ctx.hal.devid,
      services: gatewayProjections,
      inboxPrefix: inboxPrefix('gateway'),
      logger: ctx.logger,
      currentOnly: true,
    })
    let metrics: GatewayMetrics | undefined
    try {
      await bus.whenReady()
      metrics = await gatewayMetrics(ctx, nc, bus)
      const { device } = metrics
      const credentials = ctx.tls ?? ctx.hal.enclave.tlsCredentials()
      const start = async () => {
        // Port 0 is resolved here rather than by uWS: a listener uWS opened on port 0 lacks
        // SO_REUSEADDR, so after a reboot its port cannot be listened on again while the connections
        // it closed linger in TIME_WAIT; a port given to uWS gets the flag, and the reboot its port back.
        const http = ctx.http && (await concretePort(ctx.http))
        const https = ctx.https && (await concretePort(ctx.https))
        return startGateway({
          variant: ctx.hal.variant,
          bus,
          clock: ctx.hal.clock,
          tokens: new IdentityTokens(bus, ctx.hal.clock),
          onScopeFailure: scopeAudit(bus),
          metrics: device,
          ...diag(ctx),
          ...(ctx.hal.webroot ? { webroot: ctx.hal.webroot } : {}),
          ...(ctx.appCloud ? { appCloud: ctx.appCloud } : {}),
          logger: ctx.logger,
          ...(http ? { http } : {}),
          ...(https ? { https: { ...https, certFile: credentials.certFile, keyFile: credentials.keyFile } } : {}),
        })
      }
      // A port picked free may be taken by another process before the gateway listens: pick again.
      const picked = ctx.http?.port === 0 || ctx.https?.port === 0
      let gateway: Gateway | undefined
      for (let attempt = 1; !gateway; attempt++) {
        try {
          gateway = await start()
        } catch (err) {
          if (!(picked && err instanceof ListenError && attempt < PORT_ATTEMPTS)) throw err
        }
      }
      return {
        gateway,
        stop: async () => {
          await gateway.close()
          metrics?.close()
          bus.close()
        },
      }
    } catch (err) {
      metrics?.close()
      bus.close()
      throw err
    }
  })
}

interface GatewayMetrics {
  device: DeviceMetrics
  close(): void
}

/**
 * What `GET /metrics` shows: with `--split`, the other service processes' snapshots too; and the `--metrics` listener
 * when asked for.
 */
async function gatewayMetrics(ctx: ServiceContext, nc: NatsConnection, bus: ReadModelBus): Promise<GatewayMetrics> {
  const feed = ctx.split ? new MetricsSnapshots(nc, ctx.hal.devid) : undefined
  const device = new DeviceMetrics(bus, ctx.hal.clock, ctx.split ? 'gateway' : 'hemd', feed)
  let listener: MetricsListener | undefined
  try {
    listener = ctx.metrics && (await startMetricsListener(ctx.metrics, device, ctx.logger))
  } catch (err) {
    feed?.close()
    throw err
  }
  return {
    device,
    close() {
      listener?.close()
      feed?.close()
    },
  }
}
