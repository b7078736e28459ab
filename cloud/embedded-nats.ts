import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { NatsServer } from '../bus/index.js'

/** How a process reaches the cloud's own nats-server: written into the data dir (mode 0600) for `hem-cloud device`. */
export interface NatsAccess {
  url: string
  user: string
  pass: string
}

export const NATS_ACCESS_FILE = 'nats-access.json'

export interface EmbeddedNats {
  server: NatsServer
  access: NatsAccess
}

/** The access file of a cloud's data dir could not be read: no cloud has run there, or it is not the cloud's. */
export class NatsAccessError extends Error {
  override readonly name = 'NatsAccessError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The cloud's own nats-server with JetStream in `dataDir`, on loopback, with a password fresh at
 * each start: any local user could otherwise rewrite the device registry. Its port is chosen once
 * and then pinned, so that a restarted server comes back where the cloud reconnects.
 */
export async function startEmbeddedNats(dataDir: string): Promise<EmbeddedNats> {
  const dir = join(dataDir, 'nats')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const credentials = { user: 'hem-cloud', pass: randomBytes(24).toString('base64url') }
  const configFile = join(dir, 'nats-server.conf')
  const write = (port: number) => writePrivate(configFile, renderConfig(dataDir, dir, port, credentials))
  await write(-1)
  const server = await NatsServer.start({ configFile, portsFileDir: dir, restart: true })
  await write(server.port)
  const access = { url: server.url, ...credentials }
  await writePrivate(join(dataDir, NATS_ACCESS_FILE), `${JSON.stringify(access)}\n`)
  return { server, access }
}

/** The access file of a running cloud's data dir. */
export async function readNatsAccess(dataDir: string): Promise<NatsAccess> {
  const file = join(dataDir, NATS_ACCESS_FILE)
  try {
    const json = JSON.parse(await readFile(file, 'utf8')) as Partial<NatsAccess>
    if (typeof json.url === 'string' && typeof json.user === 'string' && typeof json.pass === 'string')
      return { url: json.url, user: json.user, pass: json.pass }
  } catch (err) {
    throw new NatsAccessError(`cannot read ${file}: is hem-cloud running with --data ${dataDir}?`, { cause: err })
  }
  throw new NatsAccessError(`${file} is not a hem-cloud access file`)
}

function renderConfig(dataDir: string, dir: string, port: number, c: { user: string; pass: string }): string {
  const quote = (text: string) => JSON.stringify(text)
  return [
    `listen: "127.0.0.1:${port}"`,
    `ports_file_dir: ${quote(dir)}`,
    'max_payload: 1048576',
    `jetstream { store_dir: ${quote(join(dataDir, 'jetstream'))} }`,
    `authorization { user: ${quote(c.user)}, password: ${quote(c.pass)} }`,
    '',
  ].join('\n')
}

async function writePrivate(file: string, text: string): Promise<void> {
  const temporary = `${file}.tmp`
  await writeFile(temporary, text, { mode: 0o600 })
  await rename(temporary, file)
}
