import type { Logger } from 'pino'
import type { NbdListen } from '../actors/storage/index.js'
import type { Clock, CryptoEngine, EntropySource, SignedComponent, SlotName, TrustAnchors } from '../hal/index.js'
import type { MirrorStatus, TemperatureRange, Variant } from '../protocol/index.js'

export interface Endpoint {
  host: string
  /** 0 picks a free port. */
  port: number
}

/** Where on the fleet backend the journal is mirrored. */
export interface MirrorSettings {
  /** The backend's JetStream domain. */
  domain: string
  /** The generation of the device's stream (bus/stream-names.ts), the next one once a stream stopped matching. */
  generation?: number
}

export interface DeviceOptions {
  variant: Variant
  dataDir: string
  /** Plain HTTP listener; none when undefined. */
  http?: Endpoint
  /** HTTPS listener; none when undefined. */
  https?: Endpoint
  /**
   * Export unlocked disks (P) over NBD: loopback TCP or a Unix socket; port 0 picks a free port. None when undefined.
   */
  nbd?: NbdListen
  /** An operator's certificate and key instead of the device's own. */
  tls?: { certFile: string; keyFile: string }
  /** Use this NATS server instead of starting one. */
  natsUrl?: string
  /** Connect every service as its own user to the outside nats-server that `hemd bus-config` configured in this dir. */
  busDir?: string
  /**
   * The fleet backend: the device's own nats-server links to it as a leaf node, and the journal is
   * mirrored into the backend's JetStream (domain `domain`) while the owner sets `trusted_backend`.
   * With `busDir`, what `hemd bus-config --backend` wrote there instead.
   */
  backend?: { url: string } & MirrorSettings
  /** The firmware image the device runs (what `version` shows). */
  firmware: SignedComponent
  /**
   * The installation's trust anchors (hemd's --backend-key, --vendor-key, --factory-ca; the
   * development ones only with --dev-keys): required, so that no device falls back to them.
   */
  trust: TrustAnchors
  logger: Logger
  /** Take the data-dir lock (default true); false when hemd's launcher holds it for the device. */
  lock?: boolean
  /** What the bootloader booted (hemd's launcher passes it); default the active slot, no trial. */
  booted?: { slot: SlotName; trial: boolean }
  /**
   * Called as the device stops for the reboot a firmware install orders: hemd's runtime then
   * exits so that its launcher boots the new slot. Without it the device restarts in place and
   * the new firmware boots at the next start of hemd.
   */
  onFirmwareInstalled?: () => void
  /** Each service in its own process. */
  split?: boolean
  /**
   * With `split` as root: run the services as uid and gid BASE+i (the i-th of the start order) and
   * the core group BASE+8 instead of the `hemd-<service>` users (tests; no user database entry needed).
   */
  serviceUids?: number
  clock?: Clock
  entropy?: EntropySource
  /** Chip temperatures outside it raise fls bit 0x04 (default -40 to 85 °C). */
  temperatureRange?: TemperatureRange
  /** How often a self-test runs by itself (default 5 minutes; in-process only: tests shorten it). */
  selfTestIntervalMs?: number
  /** The DIAG build (hemd --diag): the fault-injection routes of `/api/diag/*`, for certification only. */
  diag?: boolean
  /**
   * The management app's factory image (a signed ui image; hemd gives its build's own): a P device
   * whose webroot store has no app installs it at start, after the same checks as an uploaded image.
   * None by default, so a device without it serves no app until an `install_ui`.
   */
  factoryWebroot?: string
  /**
   * The family's cloud the management app calls (hemd --cloud): an https URL, or http on loopback. The gateway
   * names its origin in the app's `connect-src` and tells the page in `/app-config.json`. None by default.
   */
  appCloud?: string
  /** The crypto engines the keystore tests at boot (in-process only); tests inject a faulty one. */
  cryptoEngines?: { native: CryptoEngine; noble: CryptoEngine }
  /**
   * hemd --metrics: a plain-HTTP listener serving `GET /metrics` without a token (docs/metrics.md); port 0 picks a
   * free port, pinned for the device's life. None by default.
   */
  metrics?: Endpoint
}

export interface Device {
  readonly variant: Variant
  readonly devid: string
  readonly dataDir: string
  readonly httpUrl: string | undefined
  readonly httpsUrl: string | undefined
  /** The `--metrics` listener's `http://HOST:PORT`, if any. */
  readonly metricsUrl: string | undefined
  /** Where unlocked disks are exported over NBD (`HOST:PORT` or a socket path), if anywhere. */
  readonly nbdAddress: string | undefined
  readonly natsUrl: string
  /** The nats-server process hemd started, if it started one. */
  readonly natsPid: number | undefined
  /** The fleet backend the journal is mirrored to, if any (from the options or the bus directory). */
  readonly backend: ({ url: string } & MirrorSettings) | undefined
  /** The journal mirror's state as the eventstore last published it; undefined before its first (or no backend). */
  readonly mirror: MirrorStatus | undefined
  /** The configured CORS origin as the identity last published it; undefined before its first. */
  readonly corsOrigin: string | undefined
  /** Ed25519 public key that signs the journal (`/api/logger/key`). */
  readonly logPublicKey: Uint8Array
  /** The leaf certificate (DER) the HTTPS listener serves; undefined without one. */
  readonly tlsCertificate: Uint8Array | undefined
  /** On a trial boot of new firmware: whether it confirmed its health (the launcher then keeps it). */
  readonly trial: 'confirmed' | 'refused' | undefined
  /** Resolves once the device has stopped, by `stop()`, by an API shutdown, or by a fault. */
  readonly stopped: Promise<void>
  /** With `split`: 'on' when every service process runs as its own Unix user, else why not. */
  readonly uidSeparation: string | undefined
  /** Why the device stopped by itself, if a fault stopped it (a `--split` service that kept crashing). */
  readonly fault: string | undefined
  /** Restarts every service (what `GET /api/system/reboot` does). */
  restart(): Promise<void>
  stop(): Promise<void>
}

export interface StartedServices {
  httpPort: number | undefined
  httpsPort: number | undefined
  /** Stops the services in reverse start order. */
  stop(): Promise<void>
  /** With `split`: 'on' when every service runs as its own Unix user, else why not. */
  uidSeparation?: string
}
