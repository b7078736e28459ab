import { createHash } from 'node:crypto'
import { parseArgs } from 'node:util'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino, type Logger } from 'pino'
import {
  bootedFromEnv,
  type Device,
  type Endpoint,
  EXIT_UPGRADE,
  runLauncher,
  type RuntimeMessage,
} from '../../runtime/index.js'
import type { NbdListen } from '../../actors/storage/index.js'
import { colonHex, type TrustAnchorName } from '../../hal/index.js'
import { resolveTrust, type ResolvedTrust, type TrustFiles } from './trust-flags.js'
import type { TemperatureRange } from '../../protocol/index.js'
import { parseEndpoint, UsageError } from './endpoint.js'
import { BACKEND_OPTIONS, parseBackendArgs } from './backend-args.js'
import { mirrorBanner } from './mirror-banner.js'
import { originBanner } from './origin-banner.js'
import type { BusBackend } from '../../bus/index.js'
import { cloudOrigin } from '../../gateway/index.js'

const USAGE = `Usage: hemd [options]

Starts a simulated HEM device: its own nats-server on loopback, the actors, and the HTTP(S) gateway.
\`hemd sim --help\` shows how to inject faults into a running simulated device;
\`hemd bus-config --help\` how to configure a nats-server started on its own (systemd).

Options:
  --variant P|E          hardware variant (default P)
  --data DIR             device data directory (default ./var/hemd)
  --http HOST:PORT       plain HTTP listener (default 127.0.0.1:8080)
  --https HOST:PORT      HTTPS listener (default 127.0.0.1:8443)
  --nats URL             use this NATS server instead of starting one (no per-service users)
  --bus DIR              use the nats-server configured by hemd bus-config --out DIR,
                         every service as its own user (DIR/bus-credentials.json)
  --backend URL          mirror the journal to this fleet backend (nats:// or tls://, its
                         leaf-node port) while the owner sets trusted_backend; needs the
                         device's own nats-server (with --bus: hemd bus-config --backend;
                         not with --nats)
  --backend-domain NAME  the backend's JetStream domain (default hem)
  --stream-generation N  mirror to generation N of the device's stream (default 1): the next
                         one once the stream no longer continues the journal (status shows
                         mirror.state mismatch); it gets the whole journal still on the device
  --backend-key FILE     the fleet backend's Ed25519 public key (PEM): check-in replies must be
                         signed with it
  --vendor-key FILE      the vendor's Ed25519 public key (PEM): the firmware slots and uploaded
                         images must be signed with it
  --factory-ca FILE      the factory CA's certificate (PEM): a P device accepts provisioning it signed
  --dev-keys             development mode: the published development key (deploy/keys/) for each
                         of the three above not given. Without it all three are required (deploy/
                         install.sh configures them) and a development key is refused
  --cloud URL            the family's cloud (hem-cloud) the management app pairs authenticators and
                         asks approvals through: https (http on loopback only); the app's CSP
                         names its origin. Without it the app offers neither (default none)
  --tls-cert FILE        serve this certificate (PEM) instead of the device's own
  --tls-key FILE         the private key (PEM) of --tls-cert
  --nbd HOST:PORT|unix:PATH
                         export unlocked disks (P) over NBD on loopback TCP or a Unix
                         socket (mode 0600); the export has no authentication (default off)
  --metrics HOST:PORT    a plain-HTTP listener serving GET /metrics (Prometheus) without a token,
                         for a scraper on the board or the LAN; nothing else (default off)
  --split                run each service in its own process
  --temp-range MIN:MAX   chip temperatures (°C) outside it raise fls_state 0x04
                         (default -40:85; write --temp-range=-10:60 for a negative MIN)
  --diag                 the DIAG build, for certification and fault drills only: serves the
                         unauthenticated fault-injection routes /api/diag/* and fwv ends in
                         -DIAG (docs/diag.md); only with --dev-keys and no installation key
  --log-level LEVEL      ops log level on stderr: fatal, error, warn, info, debug, trace, silent (default info)
  -h, --help             show this help
`

export interface HemdArgs {
  variant: 'P' | 'E'
  dataDir: string
  http: Endpoint
  https: Endpoint
  natsUrl?: string
  busDir?: string
  backend?: BusBackend
  tls?: { certFile: string; keyFile: string }
  nbd?: NbdListen
  /** --metrics */
  metrics?: Endpoint
  split: boolean
  temperatureRange?: TemperatureRange
  logLevel: string
  /** --backend-key, --vendor-key, --factory-ca: the files given. */
  trustFiles?: TrustFiles
  /** --dev-keys */
  devKeys?: true
  /** --diag */
  diag?: true
  /** --cloud: the cloud the management app calls. */
  appCloud?: string
}

const TRUST_OPTIONS: Record<string, TrustAnchorName> = {
  'backend-key': 'backendKey',
  'vendor-key': 'vendorKey',
  'factory-ca': 'factoryRoot',
}

export function parseHemdArgs(argv: string[]): HemdArgs | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      variant: { type: 'string', default: 'P' },
      data: { type: 'string', default: './var/hemd' },
      http: { type: 'string', default: '127.0.0.1:8080' },
      https: { type: 'string', default: '127.0.0.1:8443' },
      nats: { type: 'string' },
      bus: { type: 'string' },
      ...BACKEND_OPTIONS,
      'backend-key': { type: 'string' },
      'vendor-key': { type: 'string' },
      'factory-ca': { type: 'string' },
      'dev-keys': { type: 'boolean', default: false },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      nbd: { type: 'string' },
      metrics: { type: 'string' },
      split: { type: 'boolean', default: false },
      'temp-range': { type: 'string' },
      diag: { type: 'boolean', default: false },
      cloud: { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) return 'help'
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`)
  const variant = values.variant.toUpperCase()
  if (variant !== 'P' && variant !== 'E') throw new UsageError(`--variant must be P or E, not ${values.variant}`)
  if (Boolean(values['tls-cert']) !== Boolean(values['tls-key']))
    throw new UsageError('--tls-cert and --tls-key go together')
  if (values.nats !== undefined && !/^(nats|tls):\/\/./.test(values.nats)) {
    throw new UsageError(`--nats must be a nats:// URL, not ${values.nats}`)
  }
  if (values.nats !== undefined && values.bus !== undefined) throw new UsageError('--nats and --bus exclude each other')
  const backend = parseBackendArgs(values)
  // The backend links to the device's own nats-server: an outside
  // one is configured on its own (hemd bus-config --backend), and hemd --bus mirrors where it links.
  if (backend && values.nats !== undefined)
    throw new UsageError("--backend needs the device's own nats-server: not with --nats")
  if (backend && values.bus !== undefined)
    throw new UsageError('with --bus, the backend is what hemd bus-config --backend configured: not --backend')
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(values['log-level']))
    throw new UsageError(`unknown --log-level ${values['log-level']}`)
  const trustFiles: TrustFiles = {}
  for (const [option, name] of Object.entries(TRUST_OPTIONS)) {
    const file = values[option as keyof typeof values]
    if (typeof file === 'string') trustFiles[name] = resolve(file)
  }
  // A device that trusts only the published development keys cannot be a production one: the
  // DIAG build, which gives its key store and its wipe to anyone on the network, runs only so.
  if (values.diag && (!values['dev-keys'] || Object.keys(trustFiles).length > 0))
    throw new UsageError(
      '--diag runs only with --dev-keys and none of --backend-key, --vendor-key, --factory-ca: ' +
        "a DIAG build never holds an installation's keys",
    )
  return {
    variant,
    dataDir: resolve(values.data),
    http: parseEndpoint('--http', values.http),
    https: parseEndpoint('--https', values.https),
    ...(values.nats ? { natsUrl: values.nats } : {}),
    ...(values.bus ? { busDir: resolve(values.bus) } : {}),
    ...(backend ? { backend } : {}),
    ...(values['tls-cert'] ? { tls: { certFile: values['tls-cert'], keyFile: values['tls-key']! } } : {}),
    ...(values.nbd ? { nbd: parseNbd(values.nbd) } : {}),
    ...(values.metrics !== undefined ? { metrics: parseMetricsEndpoint(values.metrics) } : {}),
    split: values.split,
    ...(values['temp-range'] !== undefined ? { temperatureRange: parseTemperatureRange(values['temp-range']) } : {}),
    logLevel: values['log-level'],
    ...(Object.keys(trustFiles).length > 0 ? { trustFiles } : {}),
    ...(values['dev-keys'] ? { devKeys: true as const } : {}),
    ...(values.diag ? { diag: true as const } : {}),
    ...(values.cloud !== undefined ? { appCloud: parseAppCloud(values.cloud) } : {}),
  }
}

/** `--metrics HOST:PORT`: a port of its own to be scraped at, so never 0. */
function parseMetricsEndpoint(text: string): Endpoint {
  const endpoint = parseEndpoint('--metrics', text)
  if (endpoint.port === 0) throw new UsageError(`--metrics must be HOST:PORT (port 1-65535), not ${text}`)
  return endpoint
}

/** A cloud URL the app's CSP can name (gateway's rule), as given; else the usage error that says why. */
function parseAppCloud(text: string): string {
  try {
    cloudOrigin(text)
    return text
  } catch (err) {
    throw new UsageError(`--cloud: ${err instanceof TypeError ? 'not a URL' : (err as Error).message}`)
  }
}

export function parseTemperatureRange(text: string): TemperatureRange {
  const match = /^(-?\d{1,3}):(-?\d{1,3})$/.exec(text)
  const [min, max] = [Number(match?.[1]), Number(match?.[2])]
  // The clear point lies 2 °C inside each end (health-monitor.ts), so the range needs room for it.
  if (!match || max - min < 5)
    throw new UsageError(`--temp-range must be MIN:MAX in whole °C with MAX at least MIN + 5, not ${text}`)
  return { min, max }
}

/** Whoever reaches the export reads an unlocked disk: it is never offered beyond this host. */
export function parseNbd(text: string): NbdListen {
  if (text.startsWith('unix:')) {
    const path = resolve(text.slice('unix:'.length))
    // sockaddr_un holds 108 bytes with the terminating NUL.
    if (Buffer.byteLength(path) > 107) throw new UsageError(`--nbd socket path is longer than 107 bytes: ${path}`)
    return { path }
  }
  const endpoint = parseEndpoint('--nbd', text)
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(endpoint.host)) {
    throw new UsageError(`--nbd listens on loopback only (127.0.0.1, ::1, localhost), not ${endpoint.host}`)
  }
  return endpoint
}

export async function main(argv: string[]): Promise<number> {
  // The device's code is loaded only by the processes that run it: the launcher stays small.
  if (argv[0] === '--service') return (await import('../../runtime/service-child.js')).runServiceChild(argv[1] ?? '')
  if (argv[0] === 'sim') return (await import('./sim-cli.js')).runSimCli(argv.slice(1))
  if (argv[0] === 'bus-config') return (await import('./bus-config-cli.js')).runBusConfigCli(argv.slice(1))
  const runtime = argv[0] === '--runtime'
  const own = runtime ? argv.slice(1) : argv
  let args: HemdArgs | 'help'
  try {
    args = parseHemdArgs(own)
  } catch (err) {
    process.stderr.write(`hemd: ${(err as Error).message}\n\n${USAGE}`)
    return 2
  }
  if (args === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  let trust: ResolvedTrust
  try {
    trust = await resolveTrust(args)
  } catch (err) {
    process.stderr.write(`hemd: ${(err as Error).message}\n`)
    return err instanceof UsageError ? 2 : 1
  }
  const build = fileURLToPath(new URL('../..', import.meta.url))
  if (!runtime) {
    const logger = pino({ level: args.logLevel, base: { svc: 'boot' } }, pino.destination(2))
    return runLauncher({
      dataDir: args.dataDir,
      factoryDir: build,
      nodeModules: join(build, '..', 'node_modules'),
      argv: own,
      vendorKey: trust.anchors.vendorKey,
      logger,
    })
  }
  return runRuntime(args, trust, build)
}

/** The device itself, in the process the launcher started for the slot it booted. */
async function runRuntime(args: HemdArgs, trust: ResolvedTrust, build: string): Promise<number> {
  const booted = bootedFromEnv(process.env.HEMD_BOOTED)
  // The launcher is the device's power: when it dies, so does the runtime, at once and uncleanly.
  const powerLost = () => process.kill(process.pid, 'SIGKILL')
  process.on('disconnect', powerLost)
  try {
    return await runDevice(args, trust, build, booted)
  } finally {
    // The IPC channel would keep this process alive after its device stopped.
    process.off('disconnect', powerLost)
    if (process.connected) process.disconnect()
  }
}

async function runDevice(
  args: HemdArgs,
  trust: ResolvedTrust,
  build: string,
  booted: ReturnType<typeof bootedFromEnv>,
): Promise<number> {
  const logger = pino({ level: args.logLevel, base: { svc: 'hemd' } }, pino.destination(2))
  let upgrading = false
  let device: Device
  // Listening before the device starts: a signal while it starts (its gateway may answer already)
  // waits for the start to end and then stops it cleanly, where Node's default would kill it unsealed.
  const signalled = untilSignal(logger)
  // The journal's check thread starts before the runtime's modules load: its own start (0.2–0.3 s on
  // the other core) is then over when the journal's files come (startDevice).
  const { coolDownChecks, warmUpChecks } = await import('../../eventstore/index.js')
  if (!args.split) warmUpChecks()
  try {
    const [{ FACTORY_WEBROOT_IMAGE, loadFirmware }, { startDevice }] = await Promise.all([
      import('../../image/firmware-manifest.js'),
      import('../../runtime/start-device.js'),
    ])
    const firmware = await loadFirmware(build, trust.anchors.vendorKey)
    device = await startDevice({
      ...args,
      firmware,
      trust: trust.anchors,
      logger,
      // The app this build ships: the first one of a P device (then never again; E has none).
      factoryWebroot: join(build, FACTORY_WEBROOT_IMAGE),
      // The launcher holds the data dir for the device: its lock names the process a user sees.
      ...(booted ? { booted, lock: false } : {}),
      // Only a launcher can boot another slot; without one the device restarts in place.
      ...(process.send ? { onFirmwareInstalled: () => void (upgrading = true) } : {}),
    })
  } catch (err) {
    coolDownChecks()
    process.stderr.write(`hemd: ${(err as Error).message}\n`)
    return 1
  }
  const [mirror, origin] = await Promise.all([mirrorBanner(device), originBanner(device)])
  process.stdout.write(banner(device, args, trust, mirror, origin))
  process.send?.({ type: 'ready', ...(device.trial ? { trial: device.trial } : {}) } satisfies RuntimeMessage)
  await Promise.race([signalled, device.stopped])
  try {
    await device.stop()
  } catch (err) {
    process.stderr.write(`hemd: the stop was not clean: ${(err as Error).message}\n`)
    return 1
  }
  // Not a clean stop: the launcher powers the runtime up again, as a watchdog would.
  if (device.fault) {
    process.stderr.write(`hemd: stopped by a fault: ${device.fault}\n`)
    return 1
  }
  if (upgrading) {
    process.stdout.write('hemd: rebooting into the new firmware\n')
    return EXIT_UPGRADE
  }
  process.stdout.write('hemd: stopped (journal sealed)\n')
  return 0
}

/** `mirror`, `origin`: the lines of what the device's services publish (mirrorBanner, originBanner). */
function banner(device: Device, args: HemdArgs, trust: ResolvedTrust, mirror: string[], origin: string[]): string {
  const bus =
    device.natsPid === undefined
      ? `${device.natsUrl} (external)`
      : `${device.natsUrl} (own nats-server, pid ${device.natsPid})`
  return [
    `hemd: simulated HEM device, variant ${device.variant}, devid ${device.devid}` +
      (args.split ? `, split into processes ${splitUsers(device.uidSeparation)}` : ''),
    `  data   ${device.dataDir}`,
    `  http   ${device.httpUrl ?? '-'}`,
    `  https  ${device.httpsUrl ?? '-'}${args.tls ? ' (operator certificate)' : ' (device certificate)'}`,
    ...(device.tlsCertificate
      ? [`  tls    SHA-256 ${colonHex(createHash('sha256').update(device.tlsCertificate).digest())}`]
      : []),
    `  bus    ${bus}`,
    ...mirror,
    ...(device.nbdAddress ? [`  nbd    ${device.nbdAddress} (exports disk0, disk1 while unlocked)`] : []),
    ...(device.metricsUrl ? [`  metrics ${device.metricsUrl}/metrics (no token)`] : []),
    `  log key ${Buffer.from(device.logPublicKey).toString('base64')}`,
    `  keys   ${trust.summary}`,
    ...(trust.development.length > 0
      ? ['  WARNING: development keys, published in deploy/keys/: anyone can sign with them; not for production']
      : []),
    ...origin,
    ...(args.appCloud ? [`  cloud  ${args.appCloud} (the management app's)`] : []),
    ...(args.diag
      ? [
          '  WARNING: DIAG build: /api/diag/* injects faults, dumps the key store and wipes the device,',
          '           all without a token; for certification and fault drills only, never in production',
        ]
      : []),
    `Next: curl -s ${device.httpUrl ?? device.httpsUrl}/api/system/status`,
    'Ctrl-C stops the device.',
    '',
  ].join('\n')
}

/** What the banner says of a --split device's users: its own for each service, or why not. */
function splitUsers(uidSeparation: string | undefined): string {
  return uidSeparation === 'on'
    ? '(each service as its own user)'
    : `(NO uid separation: ${uidSeparation ?? 'unknown'}; every process can read every file of the device)`
}

/**
 * The first SIGINT or SIGTERM starts the clean stop; later ones are ignored, not fatal: Ctrl-C
 * reaches the launcher and the runtime together, and the launcher passes a SIGTERM on as well.
 */
function untilSignal(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return
      stopping = true
      logger.info({ signal }, 'stopping')
      resolve()
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
}
