// The approvals load (group `approvals`): approvals per second end to end at 100 concurrent simulated devices against
// one hem-cloud and its nats-server, each device paired with a phone of its own, each from an address of its own.
// What is simulated: the device (simulated-device.ts: the protocol core's crypto, without hemd), the phone
// (simulated-phone.ts: the authenticator's core, its keys agreed once); the client relays device and broker as
// hemctl does. Every message is real and checked by the cloud as any other.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { cannedKey, type CannedAnswer } from './baseline-canned.js'
import { startBaseline, type ServerProcess } from './baseline-process.js'
import { startCloudProcess } from './cloud-process.js'
import { jsonClient, type JsonCall } from './local-client.js'
import { median } from './median-sample.js'
import { SimulatedDevice } from './simulated-device.js'
import { SimulatedPhone } from './simulated-phone.js'
import type { LoadSettings, TlsFiles } from './types.js'

export const APPROVAL_DEVICES = 100
const SCOPE = 'system:config'
/** The phone's and the client's pause between two polls. */
const POLL_MS = 5

/** One side of the approvals load: approvals/s and the latency of one, request to a token-ready authreply. */
export interface ApprovalSample {
  approvalsPerSecond: number
  /** ms */
  p50: number
  p99: number
  approvals: number
  /** Approvals that failed (a refusal, a rate limit): none in a good run. */
  failed: number
  /** HTTP requests per approval, polls included. */
  requests: number
}

export interface ApprovalsResult {
  devices: number
  cloud: ApprovalSample
  /** The same clients against node's HTTPS answering hem-cloud's recorded answers (baseline-canned.ts). */
  baseline: ApprovalSample
}

/** A device, its phone and their clients. */
interface Slot {
  base: string
  device: SimulatedDevice
  phone: SimulatedPhone
  call: JsonCall
  close(): void
}

class RefusedError extends Error {
  override readonly name = 'RefusedError'
}

const nowS = () => Math.floor(Date.now() / 1000)
const address = (plane: number, i: number) => `127.${plane}.${i >> 8}.${(i & 255) + 1}`

/** A call that counts its requests and, when `record` is given, keeps each answer by route. */
function counted(call: JsonCall, stats: { requests: number }, record?: Map<string, CannedAnswer>): JsonCall {
  return async (method, url, body) => {
    stats.requests++
    const answer = await call(method, url, body)
    record?.set(cannedKey(method, new URL(url).pathname), answer)
    return answer
  }
}

async function ok(answer: Promise<{ status: number; body: unknown }>): Promise<any> {
  const { status, body } = await answer
  if (status !== 200) throw new RefusedError(`${status} ${JSON.stringify(body)}`)
  return body
}

/** Slot `i`'s clients (answers kept in `record` when given), its device and phone; `like` lends them its own. */
function slotOf(
  base: string,
  i: number,
  stats: { requests: number },
  o: { record?: Map<string, CannedAnswer>; like?: Slot } = {},
): Slot {
  const [device, phone] = [jsonClient(address(1, i)), jsonClient(address(2, i))]
  const phoneCall = counted(phone.call, stats, o.record)
  return {
    base,
    device: o.like?.device ?? new SimulatedDevice(),
    phone: o.like ? o.like.phone.cloneAt(phoneCall, base) : new SimulatedPhone(phoneCall, base),
    call: counted(device.call, stats, o.record),
    close: () => (device.close(), phone.close()),
  }
}

/** Sequence A for slot `i`: the device's client registers, the phone accepts, the device validates. */
async function pairedSlot(
  base: string,
  i: number,
  stats: { requests: number },
  record?: Map<string, CannedAnswer>,
): Promise<Slot> {
  const slot = slotOf(base, i, stats, record ? { record } : {})
  const { device, call, phone } = slot
  const { epk } = await ok(call('POST', `${base}/notify/session`, { eid: device.eid }))
  const request = device.init(epk, nowS())
  const { rid, link } = await ok(call('POST', `${base}/notify/register/init`, { epk, eid: device.eid, request }))
  await phone.pair(link, nowS())
  const { pid, reply } = await ok(call('GET', `${base}/notify/register/check/${rid}`))
  await ok(call('POST', `${base}/notify/register/finalise/${rid}`, device.validate(epk, pid, reply)))
  return slot
}

/**
 * Sequence B once: the client asks the device and posts the event; the phone polls, opens and allows it; the client
 * polls its answer and the device checks the authreply. `sameJti`: the authreply must answer this very request.
 */
async function approveOnce({ base, device, phone, call }: Slot, sameJti: boolean): Promise<void> {
  const { epk } = await ok(call('GET', `${base}/notify/session`))
  const asked = device.request(epk, SCOPE, nowS())
  const { eventid } = await ok(call('POST', `${base}/notify/event/new`, { authreq: asked.authreq, epk }))
  while (!(await phone.finds(eventid))) await sleep(POLL_MS)
  await phone.allow(eventid, nowS())
  for (;;) {
    const answer = await call('GET', `${base}/notify/event/check/${eventid}`)
    if (answer.status === 200) {
      const { jti, scope } = device.opened((answer.body as { authreply: string }).authreply)
      if (scope !== SCOPE || (sameJti && jti !== asked.jti)) throw new RefusedError('the authreply answers another')
      return
    }
    if (answer.status !== 202) throw new RefusedError(`event/check ${answer.status}`)
    await sleep(POLL_MS)
  }
}

/** Every slot approving in a loop for `seconds`: approvals/s, latencies, failures, requests per approval. */
async function load(slots: Slot[], seconds: number, stats: { requests: number }, sameJti: boolean) {
  const latencies: number[] = []
  let failed = 0
  const before = stats.requests
  const start = performance.now()
  const end = start + seconds * 1000
  await Promise.all(
    slots.map(async (slot) => {
      while (performance.now() < end) {
        const t0 = performance.now()
        try {
          await approveOnce(slot, sameJti)
          latencies.push(performance.now() - t0)
        } catch (err) {
          if (!(err instanceof RefusedError)) throw err
          failed++
          await sleep(100)
        }
      }
    }),
  )
  const elapsed = (performance.now() - start) / 1000
  return sample(latencies, failed, elapsed, stats.requests - before)
}

function sample(latencies: number[], failed: number, seconds: number, requests: number): ApprovalSample {
  const sorted = [...latencies].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  return {
    approvalsPerSecond: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    approvals: latencies.length,
    failed,
    requests: requests / Math.max(1, latencies.length + failed),
  }
}

/** The median of the rounds, field by field (as the other loads' medians). */
function medianOf(samples: ApprovalSample[]): ApprovalSample {
  const of = (key: keyof ApprovalSample) => median(samples.map((s) => s[key]))
  return {
    approvalsPerSecond: of('approvalsPerSecond'),
    p50: of('p50'),
    p99: of('p99'),
    approvals: of('approvals'),
    failed: of('failed'),
    requests: of('requests'),
  }
}

/**
 * Starts hem-cloud (its own nats-server) in `workDir`, records the answers of one approval for the baseline, then
 * per round: 100 devices freshly paired (their per-eid limit of 30 events a minute starts afresh), the load on the
 * cloud, the load on the baseline. Servers stopped at the end.
 */
export async function measureApprovals(
  workDir: string,
  tls: TlsFiles,
  settings: LoadSettings & { rounds: number },
  progress: (line: string) => void,
  signal: AbortSignal,
): Promise<ApprovalsResult> {
  const running: ServerProcess[] = []
  const slots: Slot[] = []
  try {
    const cloud = await startCloudProcess(join(workDir, 'hem-cloud'), tls)
    running.push(cloud)
    const stats = { requests: 0 }
    const recorded = new Map<string, CannedAnswer>()
    const first = await pairedSlot(cloud.url, 0, stats, recorded)
    slots.push(first)
    await approveOnce(first, true)
    const baseline = await startBaseline({ kind: 'canned', tls, workDir, answers: Object.fromEntries(recorded) })
    running.push(baseline)
    // The baseline's devices are clones of the first (its keys and pairing, its phone's too): the recorded answers
    // are that pairing's, so each clone's checks pass, crypto and all.
    const clones = Array.from({ length: APPROVAL_DEVICES }, (_, i) => slotOf(baseline.url, i, stats, { like: first }))
    slots.push(...clones)
    const rounds: { cloud: ApprovalSample[]; baseline: ApprovalSample[] } = { cloud: [], baseline: [] }
    for (let round = 1; round <= settings.rounds; round++) {
      signal.throwIfAborted()
      progress(`round ${round}/${settings.rounds}: pairing ${APPROVAL_DEVICES} simulated devices with hem-cloud`)
      const paired = await Promise.all(
        Array.from({ length: APPROVAL_DEVICES }, (_, i) => pairedSlot(cloud.url, i, stats)),
      )
      slots.push(...paired)
      progress(`round ${round}/${settings.rounds}: approvals on hem-cloud, then on the canned baseline`)
      rounds.cloud.push(await load(paired, settings.duration, stats, true))
      rounds.baseline.push(await load(clones, settings.duration, stats, false))
    }
    return { devices: APPROVAL_DEVICES, cloud: medianOf(rounds.cloud), baseline: medianOf(rounds.baseline) }
  } finally {
    for (const slot of slots) slot.close()
    await Promise.all(running.map((server) => server.stop()))
  }
}
