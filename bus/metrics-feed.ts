import type { NatsConnection, Subscription } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { decode, encode, Subjects } from '../protocol/index.js'
import { type MetricsSnapshot, processMetrics, snapshotOf } from '../metrics/index.js'
import { services } from './services.js'

/**
 * How often a `--split` service process publishes its snapshot. Its counters live in its own process (the journal's
 * fsync in the eventstore's, the login queue in auth's): a scrape sees them at most this old. A third of Prometheus's
 * default scrape interval, and one small message per process per period however busy the device is.
 */
export const METRICS_PERIOD_MS = 5_000
/** A snapshot older than this is of a process that stopped publishing (it died or stopped): left out. */
const STALE_MS = 3 * METRICS_PERIOD_MS
/** A snapshot of this process's few dozen series is a few kB: a larger one is not a service's. */
const MAX_SNAPSHOT_BYTES = 256 * 1024

/** The processes a snapshot may come from: those that may publish events, each under its own name. */
const publishers = new Set(services.filter((spec) => spec.serves).map((spec) => spec.name))

/**
 * Publishes this process's metrics snapshot on `evt.<service>.metrics` every METRICS_PERIOD_MS, labelled `process`
 * with the service's name, until the returned stop. Nothing in a process without instruments.
 */
export function publishMetrics(nc: NatsConnection, devid: string, service: string, logger: Logger): () => void {
  const metrics = processMetrics()
  if (!metrics) return () => undefined
  const subject = new Subjects(devid).metrics(service)
  const publish = async () => {
    try {
      nc.publish(subject, encode(await snapshotOf(metrics.registry, service)))
    } catch (err) {
      logger.debug({ err: (err as Error).message }, 'the metrics snapshot could not be published')
    }
  }
  const timer = setInterval(() => void publish(), METRICS_PERIOD_MS)
  // A stopping service is not held up by it.
  timer.unref()
  void publish()
  return () => clearInterval(timer)
}

/**
 * The latest snapshot of every other service process (the gateway's, for /metrics). A snapshot is shown, never acted
 * on: one that is not a list of metrics is dropped, and the subject names the process (its bus user may publish on
 * its own `evt.<service>.>` only), so no process can pass for another.
 */
export class MetricsSnapshots {
  private readonly latest = new Map<string, { at: number; snapshot: MetricsSnapshot }>()
  private readonly subscription: Subscription

  constructor(
    nc: NatsConnection,
    devid: string,
    private readonly now: () => number = Date.now,
  ) {
    this.subscription = nc.subscribe(new Subjects(devid).metrics('*'), {
      callback: (err, msg) => {
        const service = msg?.subject.split('.').at(-2)
        if (err || !service || !publishers.has(service) || msg.data.length > MAX_SNAPSHOT_BYTES) return
        const snapshot = wellFormed(msg.data)
        if (snapshot) this.latest.set(service, { at: this.now(), snapshot })
      },
    })
  }

  /** The snapshots not yet stale. */
  current(): MetricsSnapshot[] {
    const fresh: MetricsSnapshot[] = []
    for (const [service, { at, snapshot }] of this.latest) {
      if (this.now() - at > STALE_MS) this.latest.delete(service)
      else fresh.push(snapshot)
    }
    return fresh
  }

  close(): void {
    this.subscription.unsubscribe()
  }
}

const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary'])

/** The snapshot, if every metric has a `hem_` name, a known type and numeric values with string labels. */
function wellFormed(data: Uint8Array): MetricsSnapshot | undefined {
  let snapshot: unknown
  try {
    snapshot = decode(data)
  } catch {
    return undefined
  }
  if (!Array.isArray(snapshot)) return undefined
  const ok = snapshot.every(
    (m: Partial<MetricsSnapshot[number]> | null) =>
      typeof m?.name === 'string' &&
      /^hem_[a-z0-9_]+$/.test(m.name) &&
      typeof m.help === 'string' &&
      TYPES.has(m.type as unknown as string) &&
      Array.isArray(m.values) &&
      m.values.every((v) => typeof v?.value === 'number' && labelsOk(v.labels)),
  )
  return ok ? (snapshot as MetricsSnapshot) : undefined
}

function labelsOk(labels: unknown): boolean {
  return (
    typeof labels === 'object' &&
    labels !== null &&
    Object.entries(labels).every(([k, v]) => /^[a-z_]+$/.test(k) && (typeof v === 'string' || typeof v === 'number'))
  )
}
