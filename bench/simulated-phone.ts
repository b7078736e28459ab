// The phone of the approvals load (cloud-approvals.ts): the CLI authenticator's core for the pairing (its request
// read and checked, its reply built), then its approvals made with the same protocol functions but its keys agreed
// once (S_pair per pairing, S_ab per broker key) where the authenticator agrees them again for every event: the
// load generator's X25519 (noble, pure JS) would otherwise take the CPU the cloud is measured on.
import { randomBytes } from 'node:crypto'
import { buildPairingReply, readEventData, readPairingRequest, type AidKey } from '../authenticator/index.js'
import {
  EXT_JWT_APP_HEADER,
  fromBase64,
  hmacSha256,
  openScope,
  pidx,
  sealScope,
  signExtJwt,
  toBase64,
  x25519Agree,
  x25519Clamp,
  x25519PublicKey,
} from '../protocol/index.js'
import type { JsonCall } from './local-client.js'

const PERIOD = 900

export class SimulatedPhone {
  private keys: { aidPrv: Uint8Array; aid: string; eid: string; pid: string; sPair: Uint8Array } | undefined
  /** S_ab by broker key. */
  private readonly sAb = new Map<string, Uint8Array>()

  /** `call` reaches the cloud at `base`. */
  constructor(
    private readonly call: JsonCall,
    private readonly base: string,
  ) {}

  /** §4.1: the link's request read and checked, the reply posted; the pairing kept. */
  async pair(link: string, now: number): Promise<void> {
    const { body } = await this.call('GET', link)
    const request = readPairingRequest((body as { request: unknown }).request, now)
    const aidPrv = x25519Clamp(new Uint8Array(randomBytes(32)))
    const reply = await buildPairingReply(request, rawAidKey(aidPrv), 'bench phone', 'none')
    const answer = await this.call('POST', link, reply)
    if (answer.status !== 200) throw new Error(`the pairing reply: ${answer.status}`)
    const { pid } = answer.body as { pid: string }
    const sPair = x25519Agree(aidPrv, request.eid)
    this.keys = { aidPrv, aid: reply.aid, eid: toBase64(request.eid), pid, sPair }
  }

  /** Whether `eventid` waits for this pairing (§4.2's poll). */
  async finds(eventid: string): Promise<boolean> {
    const { body } = await this.call('POST', `${this.base}/notify/event/data/allbypid`, { pid: [this.keys!.pid] })
    const events = (body as { eventid?: unknown }).eventid
    return typeof events === 'object' && events !== null && eventid in events
  }

  /** Reads the event, opens its scope and allows it for PERIOD seconds: the authreply signed, its mac made. */
  async allow(eventid: string, now: number): Promise<void> {
    const { pid, aid, eid, sPair, aidPrv } = this.keys!
    const path = `${this.base}/notify/event/data/${eventid}/${pidx(pid)}`
    const event = readEventData((await this.call('GET', path)).body)
    const jti = event && fromBase64(event.jti)
    const scope = jti && openScope(event.scope, sPair, jti)
    if (!event || !jti || scope === undefined) throw new Error('the event does not open')
    const claims = { aud: eid, jti: event.jti, exp: now + PERIOD, iat: now, pid, iss: aid }
    const authreply = signExtJwt({ ...claims, scope: sealScope(scope, sPair, jti) }, sPair, EXT_JWT_APP_HEADER)
    const epk = toBase64(event.epk)
    let sAb = this.sAb.get(epk)
    if (!sAb) this.sAb.set(epk, (sAb = x25519Agree(aidPrv, event.epk)))
    const answer = await this.call('POST', path, { authreply, mac: toBase64(hmacSha256(sAb, authreply)) })
    if (answer.status !== 200) throw new Error(`the approval: ${answer.status}`)
  }

  /** This phone's pairing, answering at another base (the baseline's clones). */
  cloneAt(call: JsonCall, base: string): SimulatedPhone {
    const clone = new SimulatedPhone(call, base)
    clone.keys = this.keys
    return clone
  }
}

/** The phone's key as raw bytes, which it keeps to agree its secrets once (the authenticator's keys never show them). */
function rawAidKey(aidPrv: Uint8Array): AidKey {
  return {
    aid: x25519PublicKey(aidPrv),
    agree: (peer) => {
      const shared = x25519Agree(aidPrv, peer)
      return Promise.resolve({ hmac: (data: Uint8Array) => Promise.resolve(hmacSha256(shared, data)) })
    },
  }
}
