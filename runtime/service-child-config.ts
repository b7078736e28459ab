import { encodeTrustAnchors, type Hal, type SlotName, type TrustAnchorName } from '../hal/index.js'
import type { NatsUserCredentials } from '../bus/index.js'
import { type DeviceService, mirrorSettings, type ServiceContext } from './run-service.js'
import type { DeviceOptions, MirrorSettings } from './types.js'

/** What the supervisor tells a service process over IPC (never argv or env: it holds a password). */
export interface ServiceChildConfig extends Pick<
  ServiceContext,
  'http' | 'https' | 'tls' | 'nbd' | 'temperatureRange' | 'diag' | 'factoryWebroot' | 'appCloud' | 'metrics'
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

/** A service's configuration: each gets only the options and the bus user that are its own. */
export function serviceChildConfig(
  service: DeviceService,
  o: DeviceOptions,
  hal: Hal,
  natsUrl: string,
  credentials: ReadonlyMap<string, NatsUserCredentials> | undefined,
  gatewayTls: { certFile: string; keyFile: string } | undefined,
): ServiceChildConfig {
  const own = credentials?.get(service)
  const mirror = credentials?.get('mirror')
  return {
    service,
    variant: hal.variant,
    dataDir: o.dataDir,
    natsUrl,
    trust: encodeTrustAnchors(o.trust),
    logLevel: o.logger.level,
    ...(own ? { credentials: own } : {}),
    ...(service === 'gateway' && o.http ? { http: o.http } : {}),
    ...(service === 'gateway' && o.https ? { https: o.https } : {}),
    ...(service === 'gateway' && gatewayTls ? { tls: gatewayTls } : {}),
    ...(service === 'gateway' && o.appCloud ? { appCloud: o.appCloud } : {}),
    ...(service === 'gateway' && o.metrics ? { metrics: o.metrics } : {}),
    ...(service === 'storage' && o.nbd ? { nbd: o.nbd } : {}),
    ...(o.booted ? { booted: o.booted } : {}),
    ...(service === 'system' && o.temperatureRange ? { temperatureRange: o.temperatureRange } : {}),
    ...(o.diag ? { diag: true } : {}),
    ...(service === 'upgrade' && o.factoryWebroot ? { factoryWebroot: o.factoryWebroot } : {}),
    ...(service === 'eventstore' && o.backend && mirror
      ? { mirror: { ...mirrorSettings(o.backend), credentials: mirror } }
      : {}),
  }
}
