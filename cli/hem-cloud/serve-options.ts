import { createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { developmentTrust } from '../../hal/index.js'
import { DomainCa, type CloudOptions } from '../../cloud/index.js'
import { UsageError } from '../index.js'

/** The flags of `hem-cloud serve`, as parseArgs gives them. */
export interface ServeValues {
  listen: string
  'tls-cert'?: string | undefined
  'tls-key'?: string | undefined
  'backend-key'?: string | undefined
  'ca-cert'?: string | undefined
  'ca-key'?: string | undefined
  domain?: string | undefined
  predefined?: string[] | undefined
  authkey?: string[] | undefined
  'factory-ca'?: string | undefined
  nats?: string | undefined
  replicas?: string | undefined
  data?: string | undefined
  'test-mode'?: boolean | undefined
  'public-url'?: string | undefined
}

export const SERVE_OPTIONS = {
  listen: { type: 'string', default: '127.0.0.1:8480' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'backend-key': { type: 'string' },
  'ca-cert': { type: 'string' },
  'ca-key': { type: 'string' },
  domain: { type: 'string' },
  predefined: { type: 'string', multiple: true },
  authkey: { type: 'string', multiple: true },
  'factory-ca': { type: 'string' },
  nats: { type: 'string' },
  replicas: { type: 'string' },
  data: { type: 'string' },
  'test-mode': { type: 'boolean' },
  'public-url': { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
} as const

const PREFIX = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/
const ZONE = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/

/** The cloud the flags describe (without its logger), and the banner's warnings. */
export async function serveOptions(
  v: ServeValues,
): Promise<{ options: Omit<CloudOptions, 'logger'>; warnings: string[] }> {
  const warnings: string[] = []
  const { host, port } = listenAddress(v.listen)
  if ((v['tls-cert'] === undefined) !== (v['tls-key'] === undefined))
    throw new UsageError('--tls-cert and --tls-key go together')
  const tls =
    v['tls-cert'] && v['tls-key'] ? { cert: await text(v['tls-cert']), key: await text(v['tls-key']) } : undefined
  if (!tls) warnings.push('PLAIN HTTP: no --tls-cert/--tls-key; the family clients and browsers need HTTPS')
  if (v['backend-key'] === undefined) throw new UsageError('--backend-key FILE is required (Ed25519 PEM private key)')
  const backendKey = await backendKeyOf(v['backend-key'])
  if (isDevelopmentKey(backendKey))
    warnings.push('the DEVELOPMENT backend key (deploy/keys/): anyone can sign check-in replies with it')
  if (v['test-mode']) warnings.push('TEST MODE: GET /notify/register/pending lists open registrations')
  const options: Omit<CloudOptions, 'logger'> = {
    host,
    port,
    ...(tls ? { tls } : {}),
    backendKey,
    ...(await domainOf(v)),
    store: storeOf(v),
    testMode: v['test-mode'] === true,
    ...(v['public-url'] !== undefined ? { publicUrl: publicUrlOf(v['public-url']) } : {}),
  }
  return { options, warnings }
}

/** Where the state lives: --nats URL [--replicas N], or the own nats-server in --data DIR. */
export function storeOf(v: Pick<ServeValues, 'nats' | 'replicas' | 'data'>): CloudOptions['store'] {
  if (v.nats !== undefined) {
    if (v.data !== undefined) throw new UsageError('--nats and --data exclude each other')
    if (!/^((nats|tls):\/\/[^\s,]+)(,(nats|tls):\/\/[^\s,]+)*$/.test(v.nats))
      throw new UsageError('--nats must be a nats:// or tls:// URL, or a comma-separated list of them')
    const replicas = Number(v.replicas ?? 1)
    if (![1, 3, 5].includes(replicas)) throw new UsageError('--replicas must be 1, 3 or 5')
    return { nats: natsAccess(v.nats), replicas }
  }
  if (v.replicas !== undefined) throw new UsageError('--replicas goes with --nats')
  if (v.data === undefined) throw new UsageError('--data DIR (the own nats-server) or --nats URL is required')
  return { dataDir: v.data }
}

/**
 * The servers without user and password, which go to the connection's options instead (never into a log): one URL,
 * or the cluster's as a comma-separated list, the credentials in any of them.
 */
function natsAccess(list: string): { url: string; user?: string; pass?: string } {
  const urls = list.split(',').map((url) => new URL(url))
  const withUser = urls.find((url) => url.username)
  const credentials = withUser
    ? { user: decodeURIComponent(withUser.username), pass: decodeURIComponent(withUser.password) }
    : {}
  for (const url of urls) [url.username, url.password] = ['', '']
  return { url: urls.map((url) => url.toString().replace(/\/$/, '')).join(','), ...credentials }
}

function listenAddress(listen: string): { host: string; port: number } {
  const match = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(listen)
  const port = Number(match?.[2])
  if (!match || !match[1] || port > 65535) throw new UsageError(`--listen must be HOST:PORT, not ${listen}`)
  return { host: match[1], port }
}

async function domainOf(v: ServeValues): Promise<Pick<CloudOptions, 'domain'>> {
  const given = [v['ca-cert'], v['ca-key'], v.domain].filter((value) => value !== undefined).length
  if (given === 0) {
    if (v.predefined || v.authkey || v['factory-ca'])
      throw new UsageError('--predefined, --authkey and --factory-ca go with --domain')
    return {}
  }
  if (given !== 3) throw new UsageError('--ca-cert, --ca-key and --domain go together')
  const zone = v.domain!
  if (!ZONE.test(zone)) throw new UsageError(`--domain must be a DNS name, not ${zone}`)
  const predefined = v.predefined ?? ['my']
  const bad = predefined.find((prefix) => !PREFIX.test(prefix))
  if (bad !== undefined) throw new UsageError(`--predefined ${bad} is not a prefix (a-z, 0-9, -)`)
  const authkeys = v.authkey ?? []
  if (authkeys.some((key) => key.length < 8 || key.includes('/')))
    throw new UsageError('an --authkey must be 8 characters or more, without /')
  const ca = await DomainCa.load(await text(v['ca-cert']!), await text(v['ca-key']!))
  const factoryRoot = v['factory-ca'] === undefined ? undefined : await factoryRootOf(v['factory-ca'])
  return { domain: { ca, zone, predefined, authkeys, ...(factoryRoot ? { factoryRoot } : {}) } }
}

async function factoryRootOf(file: string): Promise<KeyObject> {
  try {
    return new X509Certificate(await text(file)).publicKey
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`--factory-ca ${file} holds no PEM certificate`, { cause: err })
  }
}

function publicUrlOf(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--public-url must be a URL, not ${url}`)
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) throw new UsageError('--public-url must be http(s)://')
  return url.replace(/\/+$/, '')
}

async function backendKeyOf(file: string): Promise<KeyObject> {
  let key: KeyObject
  try {
    key = createPrivateKey(await text(file))
  } catch (err) {
    throw new UsageError(`--backend-key ${file} holds no PEM private key`, { cause: err })
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new UsageError(`--backend-key ${file} is not an Ed25519 key`)
  return key
}

function isDevelopmentKey(key: KeyObject): boolean {
  const raw = createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(-32)
  return raw.equals(Buffer.from(developmentTrust().backendKey))
}

async function text(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${file}`, { cause: err })
  }
}
