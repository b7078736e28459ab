import type { TimingId } from './measure-timings.js'
import type { PrimitiveId } from './primitive-loads.js'
import { median } from './median-sample.js'
import type { Sample } from './types.js'

/** One target, checked against this run's own baselines. */
export interface TargetCheck {
  label: string
  measured: number
  relation: '>=' | '<=' | '<'
  limit: number
  unit: '' | 'MB' | 'ms'
  pass: boolean
}

/** What the targets are checked on: the medians by scenario id, and the run-wide measures. */
export interface Measured {
  samples: Partial<Record<string, Sample>>
  /** Every round's sample by scenario id, in the order the rounds ran. */
  rounds: Partial<Record<string, Sample[]>>
  /** hemd's runtime's peak resident set (VmHWM), when hemd ran. */
  peakRssBytes: number | undefined
  /** The median boot to ready with the long journal, when boots ran, and that journal's records. */
  boot: { ms: number; records: number } | undefined
  /** The median boot to ready of a fresh device (no data dir), when boots ran. */
  freshBootMs: number | undefined
  /** The timed exchanges' medians of the rounds, in ms, by id (those that ran). */
  timings: Partial<Record<TimingId, number>>
}

const MB = 1024 * 1024
/** Every login answer takes at least this long by design (docs/operations.md, Limits). */
export const LOGIN_FLOOR_MS = 500
/** ...and at least this long after three failures in a row (the brake, docs/operations.md, Limits). */
const BRAKED_FLOOR_MS = 1500

type Metric = 'rps' | 'p99'

/** A load's targets against its own bare baseline, and against the bus ceiling (b) when (b) ran in the same run. */
interface LoadTargets {
  /** Least share of the bare baseline's req/s. */
  share: number
  /** Most p99, as a multiple of the bare baseline's p99. */
  p99: number
  /** Least share of (b)'s req/s: with the commands of an event-loop turn in one bus message, hemd passes (b). */
  bus?: number
}

/** Issue 25's targets for the cheap operations whose cost is hemd's path (bus, key store, token, journal record). */
const JOURNALED: LoadTargets = { share: 0.3, p99: 6, bus: 1 }
/** The same path plus the same X25519 + HKDF on both sides, which raises the floor of the ratio. */
const ECDH: LoadTargets = { share: 0.2, p99: 10 }
/** Milliseconds in @noble/post-quantum on both sides: the primitive dominates. */
const PRIMITIVE_BOUND: LoadTargets = { share: 0.6, p99: 10 }

/** A load other than encrypt: its label, its scenarios on hemd and bare, and its targets. */
type LoadTarget = [label: string, hemd: string, bare: string, targets: LoadTargets]

const primitive = (label: string, id: PrimitiveId, targets: LoadTargets): LoadTarget => [
  label,
  `${id}-hemd`,
  `${id}-bare`,
  targets,
]

const LOAD_TARGETS: LoadTarget[] = [
  ['decrypt', 'dec-hemd', 'dec-bare', JOURNALED],
  ['ECDH decrypt', 'ecdh-hemd', 'ecdh-bare', ECDH],
  primitive('Ed25519 sign', 'eddsa', JOURNALED),
  primitive('ECDSA P-256 sign', 'ecdsa', JOURNALED),
  primitive('HMAC-SHA-256', 'hmac', JOURNALED),
  primitive('ML-KEM-768 encaps', 'mlkem', PRIMITIVE_BOUND),
  primitive('ML-DSA-65 sign', 'mldsa', PRIMITIVE_BOUND),
]

/**
 * The targets (docs/performance.md says why each is what it is): issue 25's at the bench's
 * connection count: encrypt ≥ 30 % of (a) and ≥ 100 % of (b), p99 ≤ 6 × (a)'s; decrypt, the
 * signatures and HMAC each ≥ 30 % of its bare baseline, p99 ≤ 6 × its p99, and ≥ 100 % of (b)
 * when (b) ran; ECDH and the post-quantum loads against their bare baselines as before
 * (LOAD_TARGETS); status ≥ 70 % of the bare TLS GET; RSS ≤ 150 MB; the transfers against bare
 * uWS moving the same bytes, the login against its designed floor, and issue 34's boot to ready
 * ≤ 1.5 s with a 100 000-record journal and ≤ 0.4 s for a fresh device. The timed exchanges keep the
 * bounds the tests asserted before timing left them: the brake's floors (500 ms, 1500 ms after
 * three failures, 4 × serialised) and the upper bounds 1.5 s, 6 s and 10 s; a reboot with dangling
 * requests under 5 s (uWS's idle timeout is 10 s); a stalled upload's 408 within 3 s of its last
 * byte at dosprot 1 (500 ms); encrypts through a bus outage answered within 3 s (a bus that drops
 * its connections is seen at once); a 10 MB eJWT refused within 50 ms (by its length, before
 * decoding). A target whose scenarios did not run (`--only`) is left out.
 */
export function checkTargets(m: Measured): TargetCheck[] {
  const checks: TargetCheck[] = []
  const check = (
    label: string,
    measured: number,
    relation: TargetCheck['relation'],
    limit: number,
    unit: TargetCheck['unit'] = '',
  ) =>
    checks.push({
      label,
      measured,
      relation,
      limit,
      unit,
      pass: relation === '>=' ? measured >= limit : relation === '<=' ? measured <= limit : measured < limit,
    })
  const value = (id: string, metric: Metric) => {
    const s = m.samples[id]
    return s && (metric === 'rps' ? s.requestsPerSecond : s.p99)
  }
  const ratio = (
    label: string,
    of: string,
    to: string,
    metric: Metric,
    relation: TargetCheck['relation'],
    limit: number,
  ) => {
    const x = value(of, metric)
    const y = value(to, metric)
    if (x !== undefined && y !== undefined) check(label, x / y, relation, limit)
  }
  ratio('encrypt req/s / bare ceiling (a)', 'c', 'a', 'rps', '>=', JOURNALED.share)
  ratio('encrypt req/s / bus ceiling (b)', 'c', 'b', 'rps', '>=', JOURNALED.bus!)
  ratio('encrypt p99 / bare ceiling (a) p99', 'c', 'a', 'p99', '<=', JOURNALED.p99)
  for (const [label, hemd, bare, targets] of LOAD_TARGETS) {
    ratio(`${label} req/s / bare`, hemd, bare, 'rps', '>=', targets.share)
    ratio(`${label} p99 / bare p99`, hemd, bare, 'p99', '<=', targets.p99)
    if (targets.bus !== undefined) ratio(`${label} req/s / bus ceiling (b)`, hemd, 'b', 'rps', '>=', targets.bus)
  }
  ratio('status req/s / bare TLS GET', 'd-hemd', 'd-bare', 'rps', '>=', 0.7)
  // Issue 40: the metrics cost at most 3 % of encrypt's and status's throughput. Two copies of the same device differ
  // from round to round on a busy host, so each round's pair, run back to back, is one ratio (docs/performance.md).
  const paired = (label: string, of: string, to: string) => {
    const [x, y] = [m.rounds[of], m.rounds[to]]
    if (x?.length && y?.length === x.length)
      check(label, median(x.map((s, i) => s.requestsPerSecond / y[i]!.requestsPerSecond)), '>=', 0.97)
  }
  paired('encrypt req/s with metrics / without', 'enc-metered', 'enc-unmetered')
  paired('status req/s with metrics / without', 'st-metered', 'st-unmetered')
  const login = m.samples.login
  if (login) check(`login p50 / the ${LOGIN_FLOOR_MS} ms floor`, login.p50 / LOGIN_FLOOR_MS, '<=', 1.25)
  ratio('log download MB/s / bare file', 'log-hemd', 'log-bare', 'rps', '>=', 0.1)
  ratio('16 MiB upload MB/s / bare upload', 'up-hemd', 'up-bare', 'rps', '>=', 0.1)
  if (m.peakRssBytes !== undefined) check('hemd peak RSS (VmHWM)', m.peakRssBytes / MB, '<=', 150, 'MB')
  if (m.boot) check(`boot to ready, ${m.boot.records} records`, m.boot.ms, '<=', 1500, 'ms')
  if (m.freshBootMs !== undefined) check('boot to ready, fresh device', m.freshBootMs, '<=', 400, 'ms')
  const timing = (id: TimingId, label: string, bounds: [TargetCheck['relation'], number][]) => {
    const ms = m.timings[id]
    if (ms !== undefined) for (const [relation, limit] of bounds) check(label, ms, relation, limit, 'ms')
  }
  timing('login-0', 'login, no failure counted', [
    ['>=', LOGIN_FLOOR_MS],
    ['<=', 1500],
  ])
  timing('login-3', 'login after 3 failures', [
    ['>=', BRAKED_FLOOR_MS],
    ['<=', 6000],
  ])
  timing('login-4par', '4 parallel wrong guesses', [
    ['>=', 2 * LOGIN_FLOOR_MS + 2 * BRAKED_FLOOR_MS],
    ['<=', 10_000],
  ])
  timing('ejwt-parse', '10 MB eJWT refused (parse)', [['<', 50]])
  timing('upload-408', 'stalled upload to 408, dosprot 1', [['<=', 3000]])
  timing('outage-enc', 'slowest encrypt, bus outage', [['<', 3000]])
  timing('reboot', 'reboot with dangling requests', [['<', 5000]])
  return checks
}
