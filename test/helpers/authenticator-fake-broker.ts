// A small broker for the authenticator's unit tests, written from the contract's shapes (§3.4, §3.5) and
// checking what the real one checks of an authenticator (its MACs and claims), plus a device that makes
// pairing requests and authreqs as §1 says. The real broker (cloud/notify/) is tested end to end by the lead.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import {
  extJwtSigned,
  hmacSha256,
  openScope,
  parseExtJwt,
  pidOfPidx,
  sameBytes,
  sealScope,
  signExtJwt,
  x25519Agree,
  x25519PublicKey,
} from '../../protocol/index.js'

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const unb64 = (text: unknown) => new Uint8Array(Buffer.from(typeof text === 'string' ? text : '', 'base64'))
const fresh = () => new Uint8Array(randomBytes(32))

/** A device as far as the ext-auth flows go: its identity key, its pairing requests and authreqs. */
export class FakeDevice {
  readonly eidPrv = fresh()
  readonly eid = x25519PublicKey(this.eidPrv)

  /** `ext/init`'s request (§2.4.1) for the broker key `epk`. */
  request(epk: Uint8Array, epkPrv: Uint8Array, now: number, exp = now + 86400): string {
    const jti = b64(timedNonce(now))
    return signExtJwt({ jti, exp, aud: b64(epk), iss: b64(this.eid) }, x25519Agree(epkPrv, this.eid))
  }

  /** `ext/request`'s authreq claims (§2.4.3): the scope sealed for each pairing. */
  authreq(scope: string, pairings: { pid: string; aid: Uint8Array }[], now: number) {
    const jtiBytes = timedNonce(now)
    const entries = Object.fromEntries(
      pairings.map(({ pid, aid }) => [pid, sealScope(scope, x25519Agree(this.eidPrv, aid), jtiBytes)]),
    )
    return { jti: b64(jtiBytes), jtiBytes, scope: entries, exp: now + 3600 }
  }

  /** The device's checks of an authreply (§1.5 steps 4, 6): its signature and the scope it seals. */
  openAuthreply(
    authreply: string,
    aid: Uint8Array,
    jti: Uint8Array,
  ): { claims: Record<string, unknown>; scope?: string } {
    const parsed = parseExtJwt(authreply)
    const sPair = x25519Agree(this.eidPrv, aid)
    if (!extJwtSigned(parsed, sPair)) throw new Error('the authreply does not verify')
    return { claims: parsed.payload, scope: openScope(parsed.payload.scope, sPair, jti) }
  }
}

interface Registration {
  request: string
  eid: string
  epk: Uint8Array
  epkPrv: Uint8Array
  state: 'open' | 'replied' | 'refused'
  pid?: string
}

interface BrokerEvent {
  jti: string
  scope: Record<string, string>
  epk: Uint8Array
  epkPrv: Uint8Array
  exp: number
  state: 'pending' | 'allowed' | 'denied' | 'withdrawn'
  answer?: { pid: string; authreply?: string }
}

type Reply = { status: number; body?: unknown }

export class FakeBroker {
  readonly registrations = new Map<string, Registration>()
  readonly subscribers = new Map<string, { aid: string; eid: string; fid: string }>()
  readonly deletedByDevice = new Set<string>()
  readonly events = new Map<string, BrokerEvent>()
  /** Every request, `METHOD path`, in order. */
  readonly requests: string[] = []
  /** Answers 503 to this many next requests. */
  failNext = 0
  now = () => Math.floor(Date.now() / 1000)
  private readonly appKeyPrv = fresh()
  private server: Server | undefined
  base = ''

  /** Listens on loopback: plain HTTP, or HTTPS as `localhost` with the PEM `tls` given. */
  async start(tls?: { cert: string; key: string }): Promise<this> {
    const serve = (req: IncomingMessage, res: ServerResponse) => void this.serve(req, res)
    this.server = tls ? createTlsServer({ ...tls, minVersion: 'TLSv1.3' }, serve) : createServer(serve)
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    const port = (this.server.address() as AddressInfo).port
    this.base = tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`
    return this
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise((resolve) => this.server?.close(resolve))
  }

  /** Steps 2–4 of sequence A: a broker key for the device, its request, the registration; the QR fields. */
  register(device: FakeDevice, requestExp?: number): { rid: string; link: string; request: string } {
    const epkPrv = fresh()
    const epk = x25519PublicKey(epkPrv)
    const request = device.request(epk, epkPrv, this.now(), requestExp)
    const rid = Buffer.from(randomBytes(32)).toString('hex')
    this.registrations.set(rid, { request, eid: b64(device.eid), epk, epkPrv, state: 'open' })
    return { rid, link: `${this.base}/notify/register/challenge/${rid}`, request }
  }

  /** Steps 2–3 of sequence B: an event carrying the device's authreq. */
  event(device: FakeDevice, scope: string, pids: string[], exp?: number): { eventId: string; jti: Uint8Array } {
    const pairings = pids.map((pid) => ({ pid, aid: unb64(this.subscribers.get(pid)?.aid) }))
    const authreq = device.authreq(scope, pairings, this.now())
    const epkPrv = fresh()
    const eventId = Buffer.from(randomBytes(32)).toString('hex')
    this.events.set(eventId, {
      jti: authreq.jti,
      scope: authreq.scope,
      epk: x25519PublicKey(epkPrv),
      epkPrv,
      exp: exp ?? authreq.exp,
      state: 'pending',
    })
    return { eventId, jti: authreq.jtiBytes }
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    const path = new URL(req.url ?? '/', 'http://x').pathname
    this.requests.push(`${req.method} ${path}`)
    let reply: Reply
    if (this.failNext > 0) {
      this.failNext--
      reply = { status: 503, body: { error: 'unavailable' } }
    } else {
      reply = this.route(req.method ?? '', path.split('/').slice(1), text ? JSON.parse(text) : undefined)
    }
    const body = JSON.stringify(reply.body ?? {})
    res.writeHead(reply.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
    res.end(body)
  }

  private route(method: string, parts: string[], body: any): Reply {
    const [, area, what, a, b] = parts
    const key = `${method} ${area}/${what}`
    if (key === 'GET register/pending') return this.pending()
    if (area === 'register' && what === 'challenge' && a) return this.challenge(method, a, body)
    if (key === 'POST event/data' && a === 'allbypid') return this.allbypid(body)
    if (area === 'event' && what === 'data' && a && b) return this.eventData(method, a, pidOfPidx(b), body)
    if (method === 'POST' && area === 'session')
      return { status: 200, body: { epk: b64(x25519PublicKey(this.appKeyPrv)), exp: this.now() + 86400 } }
    if (key === 'POST subscribers/delete') return this.appProof(body, new Uint8Array(unb64(body.nonce)), true)
    if (key === 'POST subscribers/token') {
      const message = Buffer.concat([unb64(body.nonce), Buffer.from(String(body.fid))])
      return this.appProof(body, new Uint8Array(message), false)
    }
    return { status: 404 }
  }

  private pending(): Reply {
    const open = [...this.registrations].filter(([, r]) => r.state === 'open')
    return {
      status: 200,
      body: open.map(([rid, r]) => ({
        rid,
        link: `https://public.example/notify/register/challenge/${rid}`,
        eid: r.eid,
        exp: this.now() + 600,
      })),
    }
  }

  private challenge(method: string, rid: string, body: any): Reply {
    const registration = this.registrations.get(rid)
    if (!registration) return { status: 404 }
    if (registration.state !== 'open') return { status: 410, body: { reason: 'answered' } }
    if (method === 'GET')
      return {
        status: 200,
        body: { request: registration.request, ipinfo_eid: { city: '', country: '', ip: '192.0.2.5' } },
      }
    if (method === 'DELETE') {
      registration.state = 'refused'
      return { status: 200 }
    }
    const aid = unb64(body.aid)
    const sAb = x25519Agree(registration.epkPrv, aid)
    if (!sameBytes(hmacSha256(sAb, `${body.reply}${body.fid}`), unb64(body.mac))) return { status: 401 }
    const claims = parseExtJwt(body.reply).payload
    const requestJti = parseExtJwt(registration.request).payload.jti
    if (
      claims.jti !== requestJti ||
      claims.iss !== body.aid ||
      claims.aud !== registration.eid ||
      claims.epk !== b64(registration.epk)
    )
      return { status: 400 }
    const pid = b64(fresh())
    registration.state = 'replied'
    registration.pid = pid
    this.subscribers.set(pid, { aid: body.aid, eid: registration.eid, fid: body.fid })
    // Another host than the link's: the authenticator keeps polling where the link pointed.
    return { status: 200, body: { pid, url: 'https://elsewhere.example/notify/event/' } }
  }

  private allbypid(body: any): Reply {
    const pids: string[] = Array.isArray(body?.pid) ? body.pid : []
    const eventid: Record<string, string[]> = {}
    for (const [id, event] of this.events) {
      if (event.state !== 'pending' || event.exp < this.now()) continue
      const targets = Object.keys(event.scope).filter((pid) => pids.includes(pid) && this.subscribers.has(pid))
      if (targets.length > 0) eventid[id] = targets
    }
    const deleted = pids.filter((pid) => this.deletedByDevice.has(pid))
    return {
      status: 200,
      body: {
        eventid: Object.keys(eventid).length > 0 ? eventid : [],
        ...(deleted.length > 0 ? { pairing: Object.fromEntries(deleted.map((pid) => [pid, 'DELETED'])) } : {}),
      },
    }
  }

  private eventData(method: string, id: string, pid: string, body: any): Reply {
    const event = this.events.get(id)
    const subscriber = this.subscribers.get(pid)
    if (!event || !subscriber || !(pid in event.scope) || event.exp < this.now()) return { status: 404 }
    if (event.state === 'withdrawn') return { status: 410, body: { reason: 'cancelled' } }
    if (event.state !== 'pending') return { status: 410, body: { reason: 'answered' } }
    if (method === 'GET')
      return {
        status: 200,
        body: {
          jti: event.jti,
          scope: event.scope[pid],
          epk: b64(event.epk),
          exp: event.exp,
          ipinfo_eid: { ip: '198.51.100.9' },
        },
      }
    if (method === 'DELETE') {
      event.state = 'denied'
      event.answer = { pid }
      return { status: 200, body: { status: 'denied' } }
    }
    const sAb = x25519Agree(event.epkPrv, unb64(subscriber.aid))
    if (!sameBytes(hmacSha256(sAb, String(body.authreply)), unb64(body.mac))) return { status: 401 }
    const claims = parseExtJwt(body.authreply).payload
    if (
      claims.jti !== event.jti ||
      claims.pid !== pid ||
      claims.iss !== subscriber.aid ||
      claims.aud !== subscriber.eid
    )
      return { status: 400 }
    event.state = 'allowed'
    event.answer = { pid, authreply: body.authreply }
    return { status: 200, body: { status: 'posted' } }
  }

  private appProof(body: any, message: Uint8Array, deletes: boolean): Reply {
    // The token body names no epk (§3.5.2): the broker uses the aid's own session key.
    if (deletes && body?.epk !== b64(x25519PublicKey(this.appKeyPrv))) return { status: 401 }
    const sAb = x25519Agree(this.appKeyPrv, unb64(body.aid))
    if (!sameBytes(hmacSha256(sAb, message), unb64(body.mac))) return { status: 401 }
    const subscriber = this.subscribers.get(body.pid)
    if (!subscriber || subscriber.aid !== body.aid) return { status: 404 }
    if (!deletes) return { status: 200, body: {} }
    this.subscribers.delete(body.pid)
    return { status: 200, body: { deleted: body.pid } }
  }
}

function timedNonce(now: number): Uint8Array {
  const nonce = fresh()
  new DataView(nonce.buffer).setUint32(0, now, true)
  return nonce
}
