import { fixedBase64, pidx, toBase64 } from '../protocol/browser.js'
import type { KeyProvider } from './aid-key.js'
import {
  buildAuthreply,
  grantedScope,
  openEvent,
  readEventData,
  type ApprovalKeys,
  type OpenedEvent,
  type Period,
} from './approval.js'
import { BrokerClient, type HttpTransport } from './broker-client.js'
import { pushTokenBody, unpairBody } from './broker-proofs.js'
import { PairingError } from './pairing-error.js'
import type { PairingInvite } from './pairing-invite.js'
import { buildPairingReply } from './pairing-reply.js'
import { readPairingRequest, type PairingRequest } from './pairing-request.js'
import type { PairingRecord, PairingStore, StoredPairing } from './pairing-store.js'

export interface AuthenticatorOptions<H> {
  transport: HttpTransport
  store: PairingStore<H>
  /** The keys and the crypto: the store keeps what this provider hands out. */
  keys: KeyProvider<H>
  /** `length` random bytes (the nonces): node's or WebCrypto's generator. */
  random(length: number): Uint8Array
  /** Unix seconds. */
  now(): number
  sleep(ms: number): Promise<void>
  /** The pairing's name on the device: `<model> (<platform>)`. */
  label: string
  /** The push token; `none` while we have no push sender (§3.5.2). */
  fid?: string
  /** Backoff of the retries of a broker answering ≥ 500 (ms each). */
  retryDelays?: readonly number[]
}

/** A registration read and checked (§4.1 steps 1–2), waiting for its user's consent. */
export interface PairingOffer {
  invite: PairingInvite
  request: PairingRequest
  /** The address (and place) of the client that registered, as the broker saw it. */
  ipinfo: Record<string, string>
}

/** An event of one pairing waiting for an answer. */
export interface PendingEvent {
  eventId: string
  pid: string
}

/** An opened event, ready for its user's decision. */
export interface Approval {
  pending: PendingEvent
  pairing: StoredPairing
  opened: OpenedEvent
}

const NO_PUSH_TOKEN = 'none'
/** Event and registration ids in URL paths: ours are 64 hex (§2.1); nothing that could change the path. */
const ID = /^[A-Za-z0-9_-]{1,128}$/

/** The authenticator's flows of contract §4 over a broker, a store and a key provider it is given. */
export class Authenticator<H = unknown> {
  private readonly broker: BrokerClient
  private readonly fid: string

  constructor(private readonly options: AuthenticatorOptions<H>) {
    this.broker = new BrokerClient(options.transport, {
      sleep: options.sleep,
      ...(options.retryDelays ? { delays: options.retryDelays } : {}),
    })
    this.fid = options.fid ?? NO_PUSH_TOKEN
  }

  /**
   * §4.1 steps 1–2: fetch the registration and check it; already paired with its device → refuse it at the
   * broker, unless `pairAgain` (the automatic mode: a certification run pairs the same device each time).
   */
  async offer(invite: PairingInvite, pairAgain = false): Promise<PairingOffer> {
    const answer = record(await this.broker.call('GET', invite.link, 'GET the pairing link'))
    const request = readPairingRequest(answer.request, this.options.now(), invite.hash)
    const eid = toBase64(request.eid)
    if (!pairAgain && (await this.options.store.list()).some((pairing) => pairing.eid === eid)) {
      await this.broker.call('DELETE', invite.link, 'DELETE the pairing link')
      throw new PairingError('already paired with this device')
    }
    return { invite, request, ipinfo: strings(answer.ipinfo_eid) }
  }

  /** §4.1 steps 3–4 on consent: a fresh key pair, the reply posted, the pairing stored. */
  async accept(offer: PairingOffer, baseUrl?: string): Promise<StoredPairing> {
    const fresh = await this.options.keys.generate()
    const reply = await buildPairingReply(offer.request, fresh.key, this.options.label, this.fid)
    const answer = record(await this.broker.call('POST', offer.invite.link, 'POST the pairing reply', reply))
    if (!fixedBase64(answer.pid, 32)) throw new PairingError('the broker answered the pairing without a pid')
    const pairing: StoredPairing = {
      pid: answer.pid as string,
      eid: toBase64(offer.request.eid),
      aid: reply.aid,
      label: this.options.label,
      ...shown(offer.invite),
      baseUrl: baseUrl ?? brokerBase(offer.invite.link),
      created: this.options.now(),
    }
    await this.options.store.add({ ...pairing, aidKey: fresh.handle })
    return pairing
  }

  /** The pairings, as a page lists them: without their keys. */
  async pairings(): Promise<StoredPairing[]> {
    return (await this.options.store.list()).map(withoutKey)
  }

  /** §4.1 step 4 on refusal. */
  async decline(offer: PairingOffer): Promise<void> {
    await this.broker.call('DELETE', offer.invite.link, 'DELETE the pairing link')
  }

  /**
   * The registrations a cloud in test mode lists as open (`GET /notify/register/pending`, §3.5.1): how the
   * automatic authenticator "scans" without a camera. Entries with a bad rid or eid are left out.
   */
  async pendingRegistrations(base: string): Promise<{ rid: string; eid: string }[]> {
    const answer = await this.broker.call('GET', `${base}/notify/register/pending`, 'GET register/pending')
    const open: { rid: string; eid: string }[] = []
    for (const entry of Array.isArray(answer) ? answer : []) {
      const { rid, eid } = record(entry)
      const eidBytes = fixedBase64(eid, 32)
      if (typeof rid === 'string' && ID.test(rid) && eidBytes) open.push({ rid, eid: toBase64(eidBytes) })
    }
    return open
  }

  /** §4.2's poll: the pending events of every pairing; a pairing the broker reports `DELETED` is forgotten. */
  async pendingEvents(): Promise<PendingEvent[]> {
    const byBase = new Map<string, PairingRecord<H>[]>()
    for (const pairing of await this.options.store.list())
      byBase.set(pairing.baseUrl, [...(byBase.get(pairing.baseUrl) ?? []), pairing])
    const pending: PendingEvent[] = []
    for (const [base, pairings] of byBase) {
      const pids = pairings.map((pairing) => pairing.pid)
      const url = `${base}/notify/event/data/allbypid`
      const answer = record(await this.broker.call('POST', url, 'POST allbypid', { pid: pids }))
      for (const [pid, state] of Object.entries(record(answer.pairing)))
        if (state === 'DELETED' && pids.includes(pid)) await this.options.store.remove(pid)
      for (const [eventId, targets] of Object.entries(record(answer.eventid))) {
        if (!ID.test(eventId) || !Array.isArray(targets)) continue
        for (const pid of targets) if (typeof pid === 'string' && pids.includes(pid)) pending.push({ eventId, pid })
      }
    }
    return pending
  }

  /** Reads and opens one event; undefined when it expired, its pairing is gone or its scope does not open. */
  async open(pending: PendingEvent): Promise<Approval | undefined> {
    const pairing = (await this.options.store.list()).find((candidate) => candidate.pid === pending.pid)
    if (!pairing) return undefined
    const body = await this.broker.call('GET', eventUrl(pairing, pending), 'GET the event')
    const event = readEventData(body)
    const opened = event && (await openEvent(event, await this.keys(pairing), this.options.now()))
    return opened ? { pending, pairing: withoutKey(pairing), opened } : undefined
  }

  /** Allow: the granted scope sealed in an `authreply` valid for `period` seconds, posted with its mac. */
  async allow(approval: Approval, period: Period, writable?: boolean): Promise<void> {
    const scope = grantedScope(approval.opened, writable)
    const keys = await this.keys(await this.pairing(approval.pairing.pid))
    const body = await buildAuthreply(approval.opened, keys, { scope, period, now: this.options.now() })
    await this.broker.call('POST', eventUrl(approval.pairing, approval.pending), 'POST the approval', body)
  }

  async deny(approval: Approval): Promise<void> {
    await this.broker.call('DELETE', eventUrl(approval.pairing, approval.pending), 'DELETE the event')
  }

  /** §4.3: the broker told with an aid-bound proof, then the pairing forgotten (the device key stays on the device). */
  async unpair(pid: string): Promise<StoredPairing> {
    const pairing = await this.pairing(pid)
    const epk = await this.appSession(pairing)
    const { aidKey } = await this.keys(pairing)
    const body = await unpairBody({ pid, aidKey, epk, nonce: this.timedNonce() })
    const url = `${pairing.baseUrl}/notify/subscribers/delete`
    // 404: the broker has no such subscriber (never finalised, or deleted by the device): nothing left there.
    await this.broker.call('POST', url, 'POST subscribers/delete', body, [200, 404])
    await this.options.store.remove(pid)
    return withoutKey(pairing)
  }

  /** A new push token for a pairing (§3.5.2); we have no push sender, the route is kept for one. */
  async pushToken(pid: string, fid: string): Promise<void> {
    const pairing = await this.pairing(pid)
    const epk = await this.appSession(pairing)
    const { aidKey } = await this.keys(pairing)
    const body = await pushTokenBody({ pid, aidKey, epk, nonce: this.timedNonce(), fid })
    await this.broker.call('POST', `${pairing.baseUrl}/notify/subscribers/token`, 'POST subscribers/token', body)
  }

  private async pairing(pid: string): Promise<PairingRecord<H>> {
    const pairing = (await this.options.store.list()).find((candidate) => candidate.pid === pid)
    if (!pairing) throw new PairingError('no such pairing')
    return pairing
  }

  private async appSession(pairing: StoredPairing): Promise<Uint8Array> {
    const url = `${pairing.baseUrl}/notify/session`
    const answer = record(await this.broker.call('POST', url, 'POST session', { aid: pairing.aid }))
    const epk = fixedBase64(answer.epk, 32)
    if (!epk) throw new PairingError('the broker answered the session without an epk')
    return epk
  }

  /** The pairing's keys from its provider, which refuses a key that is not `aid`'s where it can tell. */
  private async keys(pairing: PairingRecord<H>): Promise<ApprovalKeys> {
    const aid = fixedBase64(pairing.aid, 32)
    const eid = fixedBase64(pairing.eid, 32)
    if (!aid || !eid) throw new PairingError('the stored pairing is damaged')
    const aidKey = await this.options.keys.open(pairing.aidKey, aid)
    return { aidKey, eid, pid: pairing.pid, cipher: this.options.keys }
  }

  /** 4 bytes of Unix time, little-endian, then random: a broker that checks a nonce's age can (§2.1). */
  private timedNonce(): Uint8Array {
    const nonce = this.options.random(32)
    new DataView(nonce.buffer, nonce.byteOffset, 4).setUint32(0, this.options.now(), true)
    return nonce
  }
}

/** A record's shown fields: what leaves the authenticator towards a page or a command's output. */
function withoutKey<H>({ aidKey: _kept, ...pairing }: PairingRecord<H>): StoredPairing {
  return pairing
}

function eventUrl(pairing: StoredPairing, pending: PendingEvent): string {
  return `${pairing.baseUrl}/notify/event/data/${pending.eventId}/${pidx(pending.pid)}`
}

/**
 * The broker's base from the link `<base>/notify/register/…`: the link the owner's own client showed, rather
 * than the `url` the broker answers with, which could send the pairing's polls elsewhere.
 */
function brokerBase(link: string): string {
  const at = link.indexOf('/notify/')
  return at > 0 ? link.slice(0, at) : new URL(link).origin
}

function shown(invite: PairingInvite): Pick<StoredPairing, 'user' | 'email' | 'hostname'> {
  const { user, email, hostname } = invite
  return {
    ...(user === undefined ? {} : { user }),
    ...(email === undefined ? {} : { email }),
    ...(hostname === undefined ? {} : { hostname }),
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}

function strings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, text] of Object.entries(record(value))) if (typeof text === 'string') out[name] = text.slice(0, 64)
  return out
}
