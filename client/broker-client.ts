// A client of the family's notification broker, the device-facing routes (ext-auth-contract §3.4):
// what an owner's program relays between its device and the authenticators. fetch only, no node, so
// that the web page runs it as hemctl does; every answer's shape is checked before it is used.
import { BrokerRefusedError, BrokerUnreachableError, UnexpectedBrokerAnswerError } from './broker-errors.js'
import { isExtJwt, isKey32, isObject, isPathId, isUnixTime } from './ext-shapes.js'

export interface BrokerClientOptions {
  /** The cloud's base URL (`https://api.encedo.com`); the broker's routes are its `notify/…`. */
  url: string
  /** Default the global fetch; in Node `fetchTrusting(ca)` trusts a CA of the cloud's own. */
  fetch?: typeof fetch
  /** A request that has not been answered this long fails (default 30 s). */
  timeoutMs?: number
  /**
   * Waits before each retry of a 503 `unavailable` (the cloud lost its state store's quorum and applied nothing);
   * their count is the number of retries (default 1 s, 2 s, 4 s, 4 s), each at least the answer's Retry-After.
   */
  unavailableDelays?: readonly number[]
  /** Default setTimeout's. */
  sleep?(ms: number): Promise<void>
}

/** A broker key for one flow: `epk` (b64 X25519), good until `exp` (Unix seconds). */
export interface BrokerSession {
  epk: string
  exp: number
}

/** The key bound to one device's eid (pairing, device proofs), and whether the eid has a pairing there. */
export interface DeviceBrokerSession extends BrokerSession {
  paired: boolean
}

export interface Registration {
  rid: string
  /** The URL the authenticator opens (the QR code's `link`). */
  link: string
  exp?: number
}

/** A registration while the client polls it: waiting, answered by a phone, or over (`refused`, `expired`). */
export type RegistrationState =
  { state: 'pending' } | { state: 'replied'; pid: string; reply: string } | { state: 'closed'; reason: string }

export interface ApprovalEvent {
  eventid: string
  /** How many authenticators got it: 0 and the event can only expire. */
  sentcnt: number
  exp: number
}

/** An approval event while the client polls it. */
export type EventState =
  | { state: 'pending' }
  | { state: 'allowed'; pid: string; authreply: string }
  | { state: 'denied'; pid: string }
  | { state: 'closed'; reason: string }

/** The device's proof for `subscribers/*`: its `ext/mac` answer and the eid-bound `epk` it was made for. */
export interface DeviceProof {
  nonce: string
  mac: string
  eid: string
  epk: string
}

/** A pairing as the broker keeps it. */
export interface Subscriber {
  pid: string
  label: string
  kid: string
  aid: string
  created: number
}

const TIMEOUT_MS = 30_000
const UNAVAILABLE_DELAYS = [1000, 2000, 4000, 4000]
/** A Retry-After beyond this is a broker's mistake or a stall: the wait is capped, the retries still counted. */
const MAX_RETRY_AFTER_MS = 10_000

export class BrokerClient {
  readonly base: URL
  private readonly fetch: typeof fetch

  constructor(private readonly o: BrokerClientOptions) {
    const base = new URL(o.url)
    if (base.protocol !== 'https:' && base.protocol !== 'http:')
      throw new RangeError(`${o.url}: the cloud's URL must be https:// (or http://)`)
    if (!base.pathname.endsWith('/')) base.pathname += '/'
    this.base = base
    this.fetch = o.fetch ?? globalThis.fetch.bind(globalThis)
  }

  // ---- sessions (§3.4.1) ----

  /** The anonymous key of an approval (Sequence B). */
  async anonymousSession(): Promise<BrokerSession> {
    return session(await this.expect('GET', 'session', undefined, [200]))
  }

  /** The key bound to the device `eid`: for a pairing and the device's proofs. */
  async deviceSession(eid: string): Promise<DeviceBrokerSession> {
    if (!isKey32(eid)) throw new RangeError('eid must be 32 bytes in base64')
    const { body } = await this.expect('POST', 'session', { eid }, [200])
    if (!isObject(body) || typeof body.paired !== 'boolean') throw unexpected('session', 'paired')
    return { ...session({ body }), paired: body.paired }
  }

  // ---- pairing (§3.4.2–3.4.4) ----

  /** Hands the broker the device's pairing `request` (from `ext/init`, made for `epk`). */
  async registerInit(input: { epk: string; eid: string; request: string }): Promise<Registration> {
    const { body } = await this.expect('POST', 'register/init', input, [200])
    if (!isObject(body) || !isPathId(body.rid) || !isWebUrl(body.link)) throw unexpected('register/init', 'rid, link')
    return { rid: body.rid, link: body.link, ...(isUnixTime(body.exp) ? { exp: body.exp } : {}) }
  }

  async registerCheck(rid: string): Promise<RegistrationState> {
    const answer = await this.expect('GET', `register/check/${pathId(rid)}`, undefined, [200, 202, 410])
    if (answer.status === 202) return { state: 'pending' }
    if (answer.status === 410) return closed(answer.body)
    const { body } = answer
    if (!isObject(body) || !isKey32(body.pid) || !isExtJwt(body.reply)) throw unexpected('register/check', 'pid, reply')
    return { state: 'replied', pid: body.pid, reply: body.reply }
  }

  /** Hands the broker the device's `ext/validate` answer verbatim: the pairing becomes active. */
  async registerFinalise(rid: string, validated: { kid: string; code: string }): Promise<{ pid: string }> {
    const { body } = await this.expect('POST', `register/finalise/${pathId(rid)}`, validated, [200])
    if (!isObject(body) || !isKey32(body.pid)) throw unexpected('register/finalise', 'pid')
    return { pid: body.pid }
  }

  /**
   * Withdraws a registration the owner gave up on: the phone's own refusal (`DELETE` of the link, §3.4), which any
   * holder of the rid may send. `answered` when a phone has replied already (the reply then stands until it
   * expires, unused by the device), `gone` when the broker no longer knows it.
   */
  async registerWithdraw(rid: string): Promise<'withdrawn' | 'answered' | 'gone'> {
    const answer = await this.expect('DELETE', `register/challenge/${pathId(rid)}`, undefined, [200, 404, 409])
    return answer.status === 200 ? 'withdrawn' : answer.status === 409 ? 'answered' : 'gone'
  }

  // ---- approval (§3.4.5, §3.4.6) ----

  /** Hands the broker the device's `ext/request` answer verbatim. */
  async eventNew(requested: { authreq: string; epk: string }): Promise<ApprovalEvent> {
    const { body } = await this.expect('POST', 'event/new', requested, [200])
    const wellFormed = isObject(body) && isPathId(body.eventid) && isUnixTime(body.sentcnt) && isUnixTime(body.exp)
    if (!wellFormed) throw unexpected('event/new', 'eventid, sentcnt, exp')
    return { eventid: body.eventid as string, sentcnt: body.sentcnt as number, exp: body.exp as number }
  }

  async eventCheck(eventid: string): Promise<EventState> {
    const answer = await this.expect('GET', `event/check/${pathId(eventid)}`, undefined, [200, 202, 410])
    if (answer.status === 202) return { state: 'pending' }
    if (answer.status === 410) return closed(answer.body)
    const { body } = answer
    if (!isObject(body) || !isKey32(body.pid)) throw unexpected('event/check', 'pid')
    // T-6 tells a denial by `deny` being set; an answer that says both is no answer.
    if (body.deny !== undefined && body.deny !== null && body.deny !== false) {
      if (body.authreply !== undefined) throw unexpected('event/check', 'deny or authreply, not both')
      return { state: 'denied', pid: body.pid }
    }
    if (!isExtJwt(body.authreply)) throw unexpected('event/check', 'authreply')
    return { state: 'allowed', pid: body.pid, authreply: body.authreply }
  }

  /** Withdraws a pending event (the client gave up): `withdrawn`, or `closed` when it was already answered or over. */
  async eventDelete(eventid: string): Promise<'withdrawn' | 'closed'> {
    const answer = await this.expect('DELETE', `event/${pathId(eventid)}`, undefined, [200, 410])
    return answer.status === 200 ? 'withdrawn' : 'closed'
  }

  // ---- the device's pairings at the broker (§3.4.7) ----

  async subscribersList(proof: DeviceProof): Promise<Subscriber[]> {
    const { body } = await this.expect('POST', 'subscribers/list', proof, [200])
    if (!Array.isArray(body) || !body.every(isSubscriber)) throw unexpected('subscribers/list', 'a list of pairings')
    return body.map(({ pid, label, kid, aid, created }) => ({ pid, label, kid, aid, created }))
  }

  /** Ends the pairing `pid` at the broker (the device's key must be deleted on the device too). */
  async subscribersDelete(proof: DeviceProof & { pid: string }): Promise<{ deleted: string }> {
    const { body } = await this.expect('POST', 'subscribers/delete', proof, [200])
    if (!isObject(body) || !isKey32(body.deleted)) throw unexpected('subscribers/delete', 'deleted')
    return { deleted: body.deleted }
  }

  // ---- the exchange ----

  private async expect(
    method: string,
    route: string,
    json: unknown,
    ok: readonly number[],
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(`notify/${route}`, this.base)
    const what = `${method} ${url.pathname}`
    const delays = this.o.unavailableDelays ?? UNAVAILABLE_DELAYS
    for (let attempt = 0; ; attempt++) {
      const answer = await this.send(method, url, json)
      if (!ok.includes(answer.status)) {
        const delay = delays[attempt]
        if (delay !== undefined && unavailable(answer)) {
          await (this.o.sleep ?? pause)(Math.max(delay, answer.retryAfterMs))
          continue
        }
        throw new BrokerRefusedError(answer.status, answer.body, what)
      }
      return { status: answer.status, body: answer.body }
    }
  }

  private async send(method: string, url: URL, json: unknown): Promise<Answer> {
    try {
      const response = await this.fetch(url, {
        method,
        ...(json === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(json) }),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? TIMEOUT_MS),
        redirect: 'error',
      })
      const body = parseBody(await response.text())
      return { status: response.status, body, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) }
    } catch (err) {
      throw new BrokerUnreachableError(this.base.origin, { cause: err })
    }
  }
}

interface Answer {
  status: number
  body: unknown
  retryAfterMs: number
}

/** The cloud's "nothing applied, try again": its state store had no quorum (a 503 `timeout` may have applied some). */
function unavailable(answer: Answer): boolean {
  return answer.status === 503 && isObject(answer.body) && answer.body.error === 'unavailable'
}

function retryAfterMs(header: string | null): number {
  const seconds = header === null || !/^\d{1,6}$/.test(header) ? 0 : Number(header)
  return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS)
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function parseBody(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

function session({ body }: { body: unknown }): BrokerSession {
  if (!isObject(body) || !isKey32(body.epk) || !isUnixTime(body.exp)) throw unexpected('session', 'epk, exp')
  return { epk: body.epk, exp: body.exp }
}

function closed(body: unknown): { state: 'closed'; reason: string } {
  const reason = isObject(body) && typeof body.reason === 'string' ? body.reason : 'gone'
  return { state: 'closed', reason }
}

function isSubscriber(value: unknown): value is Subscriber {
  return (
    isObject(value) &&
    isKey32(value.pid) &&
    isKey32(value.aid) &&
    typeof value.label === 'string' &&
    typeof value.kid === 'string' &&
    isUnixTime(value.created)
  )
}

function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false
  try {
    const { protocol } = new URL(value)
    return protocol === 'https:' || protocol === 'http:'
  } catch {
    return false
  }
}

function pathId(id: string): string {
  if (!isPathId(id)) throw new RangeError('a broker id is 1 to 128 characters of A-Z, a-z, 0-9, - and _')
  return id
}

function unexpected(route: string, fields: string): UnexpectedBrokerAnswerError {
  return new UnexpectedBrokerAnswerError(`the broker's answer to ${route} lacks ${fields}, or has them malformed`)
}
