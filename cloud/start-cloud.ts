import type { KeyObject } from 'node:crypto'
import { existsSync } from 'node:fs'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { jetStreamState } from './buckets.js'
import { checkinRoute } from './checkin-route.js'
import { startCloudFront, type CloudFront, type FrontLimits } from './cloud-front.js'
import { notifyRoutes } from './notify/notify-routes.js'
import { openNotifyBuckets } from './notify/notify-store.js'
import { DeviceRegistry } from './device-registry.js'
import type { DomainCa } from './domain-ca.js'
import { domainRoutes } from './domain-routes.js'
import { startEmbeddedNats, type EmbeddedNats } from './embedded-nats.js'
import { masterSecret } from './master-secret.js'
import { BUILT_PAGE, PAGE_PATH, staticPageRoutes } from './static-page.js'
import type { CloudRoute, CloudState } from './types.js'

export interface CloudOptions {
  host: string
  port: number
  /** PEM: HTTPS with TLS 1.3 only. */
  tls?: { cert: string; key: string }
  /** Ed25519 private key that signs check-in replies. */
  backendKey: KeyObject
  /** The domain service; without, `/domain/*` answers 404. */
  domain?: {
    ca: DomainCa
    zone: string
    predefined: readonly string[]
    authkeys: readonly string[]
    factoryRoot?: KeyObject
  }
  /** Where the state lives: an existing JetStream cluster (`url`: one or a comma-separated list), or the cloud's own
   * nats-server in `dataDir`. */
  store: { nats: { url: string; user?: string; pass?: string }; replicas: number } | { dataDir: string }
  testMode: boolean
  /** The base of links; by default the front's own URL. */
  publicUrl?: string
  /**
   * The web authenticator's built page, served at `/authenticator/`: by default the package's `dist-authapp/`, when
   * built (else a warning, and 404 there); `false`: not served.
   */
  page?: string | false
  /** Milliseconds since the epoch (tests set it). */
  clock?: () => number
  logger: Logger
  limits?: Partial<FrontLimits>
}

export interface RunningCloud {
  url: string
  port: number
  publicUrl: string
  state: CloudState
  /** The embedded nats-server's URL, when the cloud runs its own. */
  natsUrl: string
  stop(): Promise<void>
}

async function pageRoutes(o: CloudOptions): Promise<CloudRoute[]> {
  if (o.page === false) return []
  if (o.page === undefined && !existsSync(BUILT_PAGE)) {
    o.logger.warn(`the web authenticator is not built (deploy/setup.sh): ${PAGE_PATH} answers 404`)
    return []
  }
  return staticPageRoutes(o.page ?? BUILT_PAGE)
}

/** hem-cloud: its state (own or joined JetStream), its routes, its front. */
export async function startCloud(o: CloudOptions): Promise<RunningCloud> {
  const embedded: EmbeddedNats | undefined = 'dataDir' in o.store ? await startEmbeddedNats(o.store.dataDir) : undefined
  const access = 'nats' in o.store ? o.store.nats : embedded!.access
  let nc: NatsConnection | undefined
  let front: CloudFront | undefined
  try {
    nc = await connect({
      servers: access.url.split(','),
      name: 'hem-cloud',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      ...(access.user !== undefined ? { user: access.user, pass: access.pass ?? '' } : {}),
    })
    const state = jetStreamState(nc, 'replicas' in o.store ? o.store.replicas : 1)
    const registry = await DeviceRegistry.open(state)
    await openNotifyBuckets(state)
    front = await startCloudFront({
      host: o.host,
      port: o.port,
      ...(o.tls ? { tls: o.tls } : {}),
      clock: o.clock ?? Date.now,
      logger: o.logger,
      ...(o.limits ? { limits: o.limits } : {}),
    })
    const publicUrl = o.publicUrl ?? front.url
    front.mount([
      checkinRoute(registry, o.backendKey),
      ...(o.domain ? await domainRoutes({ ...o.domain, registry, state }) : []),
      ...notifyRoutes({
        state,
        masterSecret: await masterSecret(state),
        publicUrl,
        testMode: o.testMode,
        warn: (message) => o.logger.warn(message),
      }),
      ...(await pageRoutes(o)),
    ])
    const [connection, listening] = [nc, front]
    return {
      url: front.url,
      port: front.port,
      publicUrl,
      state,
      natsUrl: access.url,
      async stop() {
        await listening.close()
        await connection.drain().catch(() => connection.close())
        await embedded?.server.stop()
      },
    }
  } catch (err) {
    await front?.close()
    await nc?.close()
    await embedded?.server.stop()
    throw err
  }
}
