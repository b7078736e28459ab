import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type NatsUserCredentials, renderNatsConfig } from './nats-config.js'
import { services } from './services.js'
import { Subjects } from '../protocol/index.js'

/** The nats-server configuration file in a bus directory. */
export const BUS_CONFIG_FILE = 'nats-server.conf'
/** What hemd connects with: the bus URL and every service's user and password (JSON, mode 0600). */
export const BUS_CREDENTIALS_FILE = 'bus-credentials.json'

/** The bus configuration could not be written, read, or is not for this device. */
export class BusConfigError extends Error {
  override readonly name = 'BusConfigError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The fleet backend a bus links to, and where on it the journal is mirrored. */
export interface BusBackend {
  /** The backend's leaf-node URL. */
  url: string
  /** Its JetStream domain. */
  domain: string
  /** The generation of the device's stream (stream-names.ts). */
  generation?: number
}

/** How the device's services reach a bus whose users were generated for it. */
export interface BusAccess {
  devid: string
  url: string
  credentials: ReadonlyMap<string, NatsUserCredentials>
  /** The backend `hemd bus-config --backend` linked the bus to: hemd --bus mirrors the journal there. */
  backend?: BusBackend
}

export interface BusConfigOptions {
  dir: string
  devid: string
  host: string
  /** -1 lets nats-server pick a free port (read back from the ports file). */
  port: number
  credentials: ReadonlyMap<string, NatsUserCredentials>
  /** The fleet backend, if the device mirrors its journal there (the generation bounds the mirror's permissions). */
  backend?: Pick<BusBackend, 'url' | 'generation'>
}

/** One user per service of the bus table, each with a fresh random password. */
export function newBusCredentials(): Map<string, NatsUserCredentials> {
  return new Map(services.map((s) => [s.name, { user: s.name, pass: randomBytes(24).toString('base64url') }] as const))
}

/** Writes the nats-server configuration (mode 0600) into `dir` (made mode 0700); returns its path. */
export async function writeBusConfig(o: BusConfigOptions): Promise<string> {
  await mkdir(o.dir, { recursive: true, mode: 0o700 })
  const file = join(o.dir, BUS_CONFIG_FILE)
  const text = renderNatsConfig({
    host: o.host,
    port: o.port,
    portsFileDir: o.dir,
    subjects: new Subjects(o.devid),
    services,
    credentials: o.credentials,
    ...(o.backend ? { backend: o.backend } : {}),
  })
  await writePrivate(file, text)
  return file
}

/** Writes the credentials file hemd's `--bus DIR` reads (mode 0600). */
export async function writeBusAccess(dir: string, access: BusAccess): Promise<string> {
  const file = join(dir, BUS_CREDENTIALS_FILE)
  const users = Object.fromEntries([...access.credentials].map(([service, cred]) => [service, cred]))
  const { devid, url, backend } = access
  await writePrivate(file, `${JSON.stringify({ devid, url, users, ...(backend ? { backend } : {}) }, null, 2)}\n`)
  return file
}

/**
 * Reads the credentials file in `dir`. With `devid`, it must be the bus of that device: another
 * device's subjects would leave every service without permissions.
 */
export async function readBusAccess(dir: string, devid?: string): Promise<BusAccess> {
  const file = join(dir, BUS_CREDENTIALS_FILE)
  let json: unknown
  try {
    json = JSON.parse(await readFile(file, 'utf8'))
  } catch (err) {
    throw new BusConfigError(
      `cannot read the bus credentials ${file} (write them with: hemd bus-config --out ${dir})`,
      { cause: err },
    )
  }
  const access = parseAccess(json)
  if (!access)
    throw new BusConfigError(`${file} is not a complete bus credentials file: write it again with hemd bus-config`)
  if (devid !== undefined && access.devid !== devid) {
    throw new BusConfigError(
      `${file} is the bus of device ${access.devid}, not of this device ${devid}: write it again with hemd bus-config`,
    )
  }
  return access
}

/** The complete pair in `dir` (configuration and credentials for every service), or undefined. */
export async function existingBusAccess(dir: string): Promise<BusAccess | undefined> {
  try {
    await readFile(join(dir, BUS_CONFIG_FILE))
    return await readBusAccess(dir)
  } catch {
    return undefined
  }
}

function parseAccess(json: unknown): BusAccess | undefined {
  if (typeof json !== 'object' || json === null) return undefined
  const { devid, url, users, backend } = json as Record<string, unknown>
  if (typeof devid !== 'string' || !/^[0-9a-f]{16}$/.test(devid)) return undefined
  if (typeof url !== 'string' || !/^nats:\/\/./.test(url)) return undefined
  if (typeof users !== 'object' || users === null) return undefined
  const credentials = new Map<string, NatsUserCredentials>()
  for (const { name } of services) {
    const cred = (users as Record<string, unknown>)[name] as Partial<NatsUserCredentials> | undefined
    if (typeof cred?.user !== 'string' || typeof cred.pass !== 'string' || cred.pass.length < 16) return undefined
    credentials.set(name, { user: cred.user, pass: cred.pass })
  }
  if (backend === undefined) return { devid, url, credentials }
  const linked = parseBackend(backend)
  return linked && { devid, url, credentials, backend: linked }
}

/** What hemd bus-config wrote, its flags checked (cli/hemd/backend-args.ts); undefined when it is not that. */
function parseBackend(json: unknown): BusBackend | undefined {
  if (typeof json !== 'object' || json === null) return undefined
  const { url, domain, generation } = json as Record<string, unknown>
  if (typeof url !== 'string' || typeof domain !== 'string') return undefined
  if (generation !== undefined && !(Number.isSafeInteger(generation) && (generation as number) > 1)) return undefined
  return { url, domain, ...(generation !== undefined ? { generation: generation as number } : {}) }
}

async function writePrivate(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`
  await writeFile(tmp, text, { mode: 0o600 })
  await rename(tmp, file)
}
