import { rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { HalVariantMismatchError, openHal, readDeviceIdentity } from '../../hal/index.js'
import type { Variant } from '../../protocol/index.js'
import {
  BUS_CONFIG_FILE,
  BUS_CREDENTIALS_FILE,
  type BusBackend,
  existingBusAccess,
  newBusCredentials,
  writeBusAccess,
  writeBusConfig,
} from '../../bus/index.js'
import { parseEndpoint, UsageError } from './endpoint.js'
import { BACKEND_OPTIONS, parseBackendArgs } from './backend-args.js'
import type { Endpoint } from '../../runtime/index.js'

const USAGE = `Usage: hemd bus-config --out DIR [options]

Configures a nats-server that is started on its own (as systemd's hemd-bus.service does) for
the device on --data: writes DIR/${BUS_CONFIG_FILE} (run it with nats-server -c) and
DIR/${BUS_CREDENTIALS_FILE} (what hemd --bus DIR connects with): one user per service with
the narrowest subject permissions and a fresh random password. Both files mode 0600, DIR
mode 0700; no password is printed. A data dir that holds no device yet gets one, as at a
first boot.

Options:
  --out DIR              where to write the two files (required)
  --data DIR             the device's data directory (default ./var/hemd)
  --variant P|E          the device's hardware variant, as given to hemd (default P)
  --listen HOST:PORT     nats-server's listener, IPv4 loopback only (default 127.0.0.1:4222)
  --backend URL          link to the fleet backend's leaf-node URL (nats:// or tls://, with the
                         device's leaf user and password); hemd --bus DIR then mirrors the
                         journal there while the owner sets trusted_backend
  --backend-domain NAME  the backend's JetStream domain (default hem)
  --stream-generation N  mirror to generation N of the device's stream (default 1): the next
                         one once the stream no longer continues the journal
  --keep                 leave a complete pair already in DIR for the same --listen and backend
                         as it is, so that a restarted nats-server keeps the passwords hemd uses
  -h, --help             show this help

Exit status: 0 written or kept, 1 failure, 2 usage.
`

export interface BusConfigArgs {
  out: string
  dataDir: string
  variant: Variant
  listen: Endpoint
  backend?: BusBackend
  keep: boolean
}

export function parseBusConfigArgs(argv: string[]): BusConfigArgs | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: 'string' },
      data: { type: 'string', default: './var/hemd' },
      variant: { type: 'string', default: 'P' },
      listen: { type: 'string', default: '127.0.0.1:4222' },
      ...BACKEND_OPTIONS,
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) return 'help'
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`)
  if (values.out === undefined) throw new UsageError('--out DIR is required')
  const variant = values.variant.toUpperCase()
  if (variant !== 'P' && variant !== 'E') throw new UsageError(`--variant must be P or E, not ${values.variant}`)
  const listen = parseEndpoint('--listen', values.listen)
  // The bus carries every service's commands: it is never reachable from beyond this host.
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(listen.host))
    throw new UsageError(`--listen is on IPv4 loopback only (127.x.x.x), not ${listen.host}`)
  if (listen.port === 0)
    throw new UsageError('--listen needs a fixed port: hemd --bus reads it from the credentials file')
  const backend = parseBackendArgs(values)
  return {
    out: resolve(values.out),
    dataDir: resolve(values.data),
    variant,
    listen,
    ...(backend ? { backend } : {}),
    keep: values.keep,
  }
}

export async function runBusConfigCli(argv: string[]): Promise<number> {
  let args: BusConfigArgs | 'help'
  try {
    args = parseBusConfigArgs(argv)
  } catch (err) {
    process.stderr.write(`hemd bus-config: ${(err as Error).message}\n\n${USAGE}`)
    return 2
  }
  if (args === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  try {
    process.stdout.write(`hemd bus-config: ${await configureBus(args)}\n`)
    return 0
  } catch (err) {
    process.stderr.write(`hemd bus-config: ${(err as Error).message}\n`)
    return 1
  }
}

/** Writes a fresh pair (or keeps a complete one with --keep); says which, without any password. */
export async function configureBus(args: BusConfigArgs): Promise<string> {
  const url = `nats://${args.listen.host}:${args.listen.port}`
  const kept = args.keep ? await existingBusAccess(args.out) : undefined
  if (kept && kept.url === url && JSON.stringify(kept.backend) === JSON.stringify(args.backend))
    return `kept the bus configuration in ${args.out} (devid ${kept.devid}, ${url})`
  const devid = await deviceId(args)
  const credentials = newBusCredentials()
  // The credentials file is written last and marks the pair complete: a write cut short
  // between the two files is never taken for a pair by --keep.
  await rm(join(args.out, BUS_CREDENTIALS_FILE), { force: true })
  await writeBusConfig({
    dir: args.out,
    devid,
    host: args.listen.host,
    port: args.listen.port,
    credentials,
    ...(args.backend ? { backend: args.backend } : {}),
  })
  await writeBusAccess(args.out, { devid, url, credentials, ...(args.backend ? { backend: args.backend } : {}) })
  return `wrote ${join(args.out, BUS_CONFIG_FILE)} and ${BUS_CREDENTIALS_FILE} for devid ${devid} (${url})`
}

/**
 * The devid the bus's subjects are for. A device that exists is only read (the running hemd may
 * hold it); a new data dir gets its device the way a first boot makes it.
 */
async function deviceId(args: BusConfigArgs): Promise<string> {
  const identity = await readDeviceIdentity(args.dataDir)
  if (identity) {
    if (identity.variant !== args.variant)
      throw new HalVariantMismatchError(args.dataDir, identity.variant, args.variant)
    return identity.devid
  }
  const { loadFirmware } = await import('../../image/firmware-manifest.js')
  const firmware = await loadFirmware(fileURLToPath(new URL('../..', import.meta.url)))
  const hal = await openHal({ variant: args.variant, dataDir: args.dataDir, firmware })
  try {
    return hal.devid
  } finally {
    await hal.close()
  }
}
