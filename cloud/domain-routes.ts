import 'reflect-metadata'
import type { KV } from '@nats-io/kv'
import { Pkcs10CertificateRequest } from '@peculiar/x509'
import { createHash, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto'
import { parseGenuine, verifyGenuine } from '../hal/index.js'
import { decodeBase64, wrapTlsKeyBytes } from '../protocol/index.js'
import type { DeviceRegistry } from './device-registry.js'
import type { DomainCa } from './domain-ca.js'
import { PredefinedNames } from './predefined-names.js'
import { objectBody, refuse } from './reply-helpers.js'
import type { CloudReply, CloudRequest, CloudRoute, CloudState } from './types.js'

export interface DomainOptions {
  ca: DomainCa
  /** The zone the prefixes are names in: `ence.do` in the family's harness. */
  zone: string
  /** Shared names every device may have (`my`). */
  predefined: readonly string[]
  /** The operator's auth keys for `/domain/register/<prefix>/<authkey>`. */
  authkeys: readonly string[]
  registry: DeviceRegistry
  state: CloudState
  /** The factory CA's public key: then a `genuine` must be the factory's statement, signed by it (401). */
  factoryRoot?: KeyObject
}

/** Who holds a custom prefix: the device that registered it, or else the auth key it came with (its hash). */
interface Registration {
  devid?: string
  authkey?: string
  cname?: string
  created: number
}

interface Order {
  crt: string
  created: number
}

const PREFIX = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/
const ORDER_ID = /^[0-9a-f]{64}$/
const CERT_DAYS = 90
const ORDER_LIFETIME = 86400

/** `/domain/*` (ext-auth contract §3.3): the names of the zone, certified by the operator's CA. */
export async function domainRoutes(o: DomainOptions): Promise<CloudRoute[]> {
  const service = new DomainService(
    o,
    await o.state.bucket('domains'),
    await o.state.bucket('domain-orders', { ttlMs: 2 * ORDER_LIFETIME * 1000 }),
    await PredefinedNames.open(o.state, o.ca),
  )
  return [
    {
      method: 'GET',
      pattern: '/domain/predefs',
      handler: async () => ({ status: 200, body: { prefix: o.predefined } }),
    },
    { method: 'GET', pattern: '/domain/check/:prefix', handler: (req) => service.check(req.params.prefix!) },
    { method: 'POST', pattern: '/domain/register/:prefix/:authkey', handler: (req) => service.register(req, true) },
    { method: 'POST', pattern: '/domain/register/:prefix', handler: (req) => service.register(req, false) },
    { method: 'GET', pattern: '/domain/register/:id', handler: (req) => service.order(req.params.id!, req.now) },
  ]
}

/** What a register request asks, once its fields parse. */
interface Asked {
  prefix: string
  devid?: string
  authkey?: string
  body: Record<string, unknown>
}

class DomainService {
  private readonly authkeyHashes: Buffer[]

  constructor(
    private readonly o: DomainOptions,
    private readonly domains: KV,
    private readonly orders: KV,
    private readonly names: PredefinedNames,
  ) {
    this.authkeyHashes = o.authkeys.map(hashOf)
  }

  async check(prefix: string): Promise<CloudReply> {
    if (!PREFIX.test(prefix)) return refuse(400, 'bad_prefix', 'Not a prefix: a-z, 0-9 and -, 1 to 63 characters')
    const taken = this.o.predefined.includes(prefix) || (await this.domains.get(prefix))?.operation === 'PUT'
    return taken ? { status: 200, body: { prefix, taken: true } } : refuse(404, 'free', `${prefix} is free`)
  }

  async register(req: CloudRequest, withAuthkey: boolean): Promise<CloudReply> {
    const authkey = withAuthkey ? this.authkeyOf(req.params.authkey!) : undefined
    if (withAuthkey && !authkey) return refuse(401, 'bad_authkey', 'Unknown auth key')
    const prefix = req.params.prefix!
    if (!PREFIX.test(prefix)) return refuse(400, 'bad_prefix', 'Not a prefix: a-z, 0-9 and -, 1 to 63 characters')
    const body = objectBody(req.body ?? {})
    if (!body) return refuse(400, 'bad_request', 'The body must be a JSON object')
    const devid = devidOf(body.genuine, this.o.factoryRoot)
    if (devid === null) return refuse(400, 'bad_genuine', '`genuine` must be base64 of a genuine statement')
    if (devid === false) return refuse(401, 'not_genuine', '`genuine` is not signed by the factory CA')
    const asked: Asked = { prefix, body, ...(devid ? { devid } : {}), ...(authkey ? { authkey } : {}) }
    if (this.o.predefined.includes(prefix)) return this.predefined(asked, req.now)
    return this.custom(asked, req.now)
  }

  async order(id: string, now: number): Promise<CloudReply> {
    const entry = ORDER_ID.test(id) ? await this.orders.get(id) : undefined
    if (entry?.operation !== 'PUT') return refuse(404, 'not_found', 'No such registration')
    const order = entry.json<Order>()
    if (order.created + ORDER_LIFETIME <= now) {
      return {
        status: 410,
        body: { error: 'expired', message: 'The registration is over 24 h old', reason: 'expired' },
      }
    }
    return { status: 200, body: { status: 'done', crt: order.crt } }
  }

  /** The shared name's key, wrapped for the device's eid as its `tls` import decrypts it. */
  private async predefined(asked: Asked, now: number): Promise<CloudReply> {
    if (!asked.devid) return refuse(400, 'bad_genuine', 'A predefined prefix needs `genuine`')
    const eid = (await this.o.registry.get(asked.devid))?.eid
    if (!eid) return refuse(409, 'unknown_device', 'The device is not known here: check in first')
    const name = `${asked.prefix}.${this.o.zone}`
    const material = await this.names.material(name, now)
    const wrapped = wrapTlsKeyBytes(Buffer.from(material.key, 'base64'), Buffer.from(eid, 'base64'))
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
    return {
      status: 200,
      body: {
        crt: this.o.ca.chainOf(Buffer.from(material.crt, 'base64')),
        key: `${b64(wrapped.iv)}.${b64(wrapped.ciphertext)}`,
        emp: b64(wrapped.emp),
      },
    }
  }

  /** A certificate for the CSR's key, SAN `<prefix>.<zone>` (and `cname`), for the prefix's holder only. */
  private async custom(asked: Asked, now: number): Promise<CloudReply> {
    const entry = await this.domains.get(asked.prefix)
    const held = entry?.operation === 'PUT' ? entry.json<Registration>() : undefined
    const mine = held !== undefined && sameHolder(held, asked)
    if (!asked.authkey && !mine) return refuse(401, 'bad_authkey', 'Registering this prefix needs an auth key')
    if (held && !mine) return refuse(409, 'taken', `${asked.prefix} is registered to another holder`)
    const spki = await csrKey(asked.body.csr)
    if (!spki) return refuse(400, 'bad_csr', '`csr` must be a signed PKCS#10 request, base64 DER or PEM')
    const cname = asked.body.cname
    if (cname !== undefined && cname !== null && cname !== '' && (typeof cname !== 'string' || !DNS_NAME.test(cname)))
      return refuse(400, 'bad_cname', '`cname` must be a DNS name')
    const names = [`${asked.prefix}.${this.o.zone}`, ...(typeof cname === 'string' && cname ? [cname] : [])]
    const registration: Registration = {
      ...(asked.devid ? { devid: asked.devid } : {}),
      ...(asked.authkey ? { authkey: asked.authkey } : {}),
      ...(names[1] ? { cname: names[1] } : {}),
      created: held?.created ?? now,
    }
    try {
      const bytes = JSON.stringify(registration)
      if (entry) await this.domains.update(asked.prefix, bytes, entry.revision)
      else await this.domains.create(asked.prefix, bytes)
    } catch {
      return refuse(409, 'taken', `${asked.prefix} was registered meanwhile`)
    }
    const leaf = await this.o.ca.issue(
      spki,
      names,
      new Date((now - 300) * 1000),
      new Date((now + CERT_DAYS * 86400) * 1000),
    )
    const crt = this.o.ca.chainOf(leaf)
    const id = randomBytes(32).toString('hex')
    await this.orders.put(id, JSON.stringify({ crt, created: now } satisfies Order))
    return { status: 200, body: { status: 'done', id, prefix: asked.prefix, crt } }
  }

  /** The hash of `given` when it is one of the operator's auth keys, compared in constant time. */
  private authkeyOf(given: string): string | undefined {
    const hash = hashOf(given)
    let found = false
    for (const known of this.authkeyHashes) found = timingSafeEqual(hash, known) || found
    return found ? hash.toString('hex') : undefined
  }
}

function hashOf(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

function sameHolder(held: Registration, asked: Asked): boolean {
  return held.devid ? held.devid === asked.devid : held.authkey !== undefined && held.authkey === asked.authkey
}

/**
 * The devid a `genuine` names; undefined when absent (or null), null when present but no genuine statement, false
 * when a factory CA is configured and the statement is not the factory's, signed by it.
 */
function devidOf(genuine: unknown, factoryRoot: KeyObject | undefined): string | undefined | null | false {
  if (genuine === undefined || genuine === null) return undefined
  const bytes = typeof genuine === 'string' ? decodeBase64(genuine) : undefined
  const statement = bytes && parseGenuine(bytes)
  if (!statement) return null
  if (factoryRoot && (statement.kind !== 'factory' || !verifyGenuine(statement, factoryRoot))) return false
  return statement.devid
}

/** The SPKI DER of a self-signed CSR (base64 DER or PEM), or undefined. */
async function csrKey(csr: unknown): Promise<Uint8Array | undefined> {
  if (typeof csr !== 'string' || csr === '') return undefined
  try {
    const der = csr.includes('-----BEGIN') ? undefined : decodeBase64(csr.replace(/\s+/g, ''))
    const request = new Pkcs10CertificateRequest(der ?? csr)
    if (!(await request.verify())) return undefined
    return new Uint8Array(request.publicKey.rawData)
  } catch {
    return undefined
  }
}
