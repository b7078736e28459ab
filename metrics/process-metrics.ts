import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The instruments of one process, whatever services it runs: the bus's and the journal's counters, the login
 * brake's, and Node's own (RSS, heap, event-loop lag). One set per process: a `--split` service publishes its
 * snapshot on the bus (bus/metrics-feed.ts), a one-process device's gateway reads them here.
 */
export interface ProcessMetrics {
  readonly registry: Registry
  readonly busEnvelopesSent: Counter
  readonly busEnvelopesReceived: Counter
  /** Commands per envelope received: how much the command batching gathers. */
  readonly busBatchSize: Histogram
  readonly journalRecords: Counter
  readonly journalSeals: Counter
  /** One durable append: the write and its fdatasync. */
  readonly journalFsync: Histogram
  readonly loginFailures: Counter<'kind'>
  /** The login attempts waiting for their check, read when a scrape asks (followLoginQueue). */
  readonly loginQueueDepth: Gauge
}

/** Commands per envelope: 1 to BATCH_LIMITS.commands (64). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64]
/** A durable append on an SD card or eMMC: from a fraction of a millisecond to a stalled card's seconds. */
const FSYNC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

let current: ProcessMetrics | undefined
/**
 * The bench's baseline (bench/metrics-cost.ts): a device whose processes run without instruments, to measure what
 * they cost against, in the same run. Internal: the environment of the bench's own hemd, never a flag of hemd.
 */
const off = process.env.HEMD_UNMETERED === '1'
let loginQueue: () => number = () => 0

/**
 * This process's instruments, made at the first call; undefined in a process that runs without them (the bench's
 * baseline). Read once by each owner, so that the hot path costs an increment.
 */
export function processMetrics(): ProcessMetrics | undefined {
  if (off) return undefined
  return (current ??= createProcessMetrics())
}

/** Where the login queue's depth is read at a scrape: the auth service's queue. */
export function followLoginQueue(depth: () => number): void {
  loginQueue = depth
}

function createProcessMetrics(): ProcessMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'hem_' })
  // Gauges named as counters (`_total`), which promtool rejects: counts of libuv handles no dashboard needs.
  for (const gauge of ['active_handles_total', 'active_requests_total', 'active_resources_total'])
    registry.removeSingleMetric(`hem_nodejs_${gauge}`)
  const registers = [registry]
  return {
    registry,
    busEnvelopesSent: new Counter({
      name: 'hem_bus_envelopes_sent_total',
      help: 'Command envelopes (one bus message of one or more commands) this process sent',
      registers,
    }),
    busEnvelopesReceived: new Counter({
      name: 'hem_bus_envelopes_received_total',
      help: 'Command envelopes the services of this process received',
      registers,
    }),
    busBatchSize: new Histogram({
      name: 'hem_bus_batch_size_commands',
      help: 'Commands per envelope the services of this process received',
      buckets: BATCH_BUCKETS,
      registers,
    }),
    journalRecords: new Counter({
      name: 'hem_journal_records_appended_total',
      help: 'Journal records durably appended (seals not counted)',
      registers,
    }),
    journalSeals: new Counter({ name: 'hem_journal_seals_total', help: 'Journal seals written', registers }),
    journalFsync: new Histogram({
      name: 'hem_journal_fsync_seconds',
      help: 'Duration of one durable journal append (write and fdatasync) of a group commit',
      buckets: FSYNC_BUCKETS,
      registers,
    }),
    loginFailures: new Counter({
      name: 'hem_login_failures_total',
      help: 'Refused login attempts, by kind (passphrase: POST /api/auth/token; external: an external authenticator)',
      labelNames: ['kind'],
      registers,
      // Both kinds from the start, at 0: a series that appears only at its first failure has no rate before it.
      collect() {
        for (const kind of ['passphrase', 'external']) this.labels(kind).inc(0)
      },
    }),
    loginQueueDepth: new Gauge({
      name: 'hem_login_queue_depth',
      help: 'Login attempts waiting for their passphrase check',
      registers,
      collect() {
        this.set(loginQueue())
      },
    }),
  }
}
