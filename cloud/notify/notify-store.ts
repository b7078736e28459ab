import type { CloudState } from '../types.js'
import { JsonBucket } from './json-bucket.js'
import type { NotifyEvent, Registration, Subscriber } from './notify-records.js'

const MINUTE = 60_000
const HOUR = 60 * MINUTE

/**
 * The broker's buckets and how long JetStream keeps a value after its last write. The TTLs only bound
 * growth: every record also carries its own `exp`, checked on read, so a TTL longer than needed is harmless.
 */
export const NOTIFY_BUCKETS = {
  /** rid → Registration: 10 min waiting + 10 min readable once closed. */
  registrations: { name: 'notify-registrations', ttlMs: 30 * MINUTE },
  /** eventid → NotifyEvent: an authreq lives ≤ 3630 s, + 10 min readable once closed. */
  events: { name: 'notify-events', ttlMs: 2 * HOUR },
  /** `<pidx>.<eventid>` → exp: the events waiting for a pid (allbypid). */
  inbox: { name: 'notify-inbox', ttlMs: 2 * HOUR },
  /** pidx → Subscriber: the active pairings, kept until deleted. */
  subscribers: { name: 'notify-subscribers', ttlMs: 0 },
  /** `<eidx>.<pidx>` → created: the pairings of a device (list, `paired`). */
  pairings: { name: 'notify-pairings', ttlMs: 0 },
  /** pidx → deletion time: pairings a device removed, reported `DELETED` to the app for 30 days. */
  unpaired: { name: 'notify-unpaired', ttlMs: 30 * 24 * HOUR },
  /** `<eidx>.<nonce>` → time: device nonces seen, good ±300 s, so kept 15 min. */
  nonces: { name: 'notify-nonces', ttlMs: 15 * MINUTE },
  /** `<aidx>.<nonce>` → time: app nonces (random, not timed) seen while the aid-bound key lives (2 days). */
  appNonces: { name: 'notify-app-nonces', ttlMs: 49 * HOUR },
  /** `<route>.<eidx>.<window>` → count: the per-eid rate limits. */
  rates: { name: 'notify-rates', ttlMs: 20 * MINUTE },
} as const

export interface NotifyStore {
  registrations: JsonBucket<Registration>
  events: JsonBucket<NotifyEvent>
  inbox: JsonBucket<number>
  subscribers: JsonBucket<Subscriber>
  pairings: JsonBucket<number>
  unpaired: JsonBucket<number>
  nonces: JsonBucket<number>
  appNonces: JsonBucket<number>
  rates: JsonBucket<number>
}

const open = (state: CloudState, { name, ttlMs }: { name: string; ttlMs: number }) =>
  state.bucket(name, ttlMs ? { ttlMs } : {})

/**
 * Makes every bucket of the broker now, at the cloud's start: a stream of three copies cannot be made while one
 * of the three servers is lost, so a bucket first made by the first request that needs it could then not be made.
 */
export async function openNotifyBuckets(state: CloudState): Promise<void> {
  await Promise.all(Object.values(NOTIFY_BUCKETS).map((bucket) => open(state, bucket)))
}

/** The broker's buckets in the cloud's state (each made on first use, unless openNotifyBuckets made it). */
export function notifyStore(state: CloudState): NotifyStore {
  const bucket = <T>(name: keyof typeof NOTIFY_BUCKETS): JsonBucket<T> =>
    new JsonBucket<T>(() => open(state, NOTIFY_BUCKETS[name]))
  return {
    registrations: bucket('registrations'),
    events: bucket('events'),
    inbox: bucket('inbox'),
    subscribers: bucket('subscribers'),
    pairings: bucket('pairings'),
    unpaired: bucket('unpaired'),
    nonces: bucket('nonces'),
    appNonces: bucket('appNonces'),
    rates: bucket('rates'),
  }
}
