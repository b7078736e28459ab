// The bench's targets (bench/check-targets.ts): issue 25's limits, each against the baselines of
// the same run, and only for the loads that ran. Plain arithmetic on made-up medians: no load runs.
import t from 'tap'
import { checkTargets, type Measured, type TargetCheck } from '../bench/check-targets.js'
import type { Sample } from '../bench/types.js'

const sample = (requestsPerSecond: number, p99: number): Sample => ({
  requestsPerSecond,
  p50: p99 / 2,
  p99,
  ok: 1,
  errors: 0,
  non2xx: 0,
})

const checks = (samples: Measured['samples'], more: Partial<Measured> = {}): TargetCheck[] =>
  checkTargets({
    samples,
    rounds: {},
    peakRssBytes: undefined,
    boot: undefined,
    freshBootMs: undefined,
    timings: {},
    ...more,
  })

const byLabel = (list: TargetCheck[]) => Object.fromEntries(list.map((c) => [c.label, c]))

t.test('encrypt: >= 30% of (a), >= 100% of (b), p99 <= 6x (a)', async (t) => {
  const a = sample(10_000, 2)
  const at = byLabel(checks({ a, b: sample(3000, 5), c: sample(3000, 12) }))
  t.match(at['encrypt req/s / bare ceiling (a)'], { measured: 0.3, relation: '>=', limit: 0.3, pass: true })
  t.match(at['encrypt req/s / bus ceiling (b)'], { measured: 1, relation: '>=', limit: 1, pass: true })
  t.match(at['encrypt p99 / bare ceiling (a) p99'], { measured: 6, relation: '<=', limit: 6, pass: true })

  const missed = byLabel(checks({ a, b: sample(3001, 5), c: sample(2999, 12.1) }))
  t.equal(missed['encrypt req/s / bare ceiling (a)']!.pass, false, '29.99% of (a) misses')
  t.equal(missed['encrypt req/s / bus ceiling (b)']!.pass, false, 'just under (b) misses')
  t.equal(missed['encrypt p99 / bare ceiling (a) p99']!.pass, false, '6.05x misses')
})

t.test('decrypt, signatures and HMAC: 30% and 6x of their own baseline, and (b) only when (b) ran', async (t) => {
  const loads = [
    ['decrypt', 'dec'],
    ['Ed25519 sign', 'eddsa'],
    ['ECDSA P-256 sign', 'ecdsa'],
    ['HMAC-SHA-256', 'hmac'],
  ] as const
  const own = Object.fromEntries(
    loads.flatMap(([, id]) => [
      [`${id}-bare`, sample(20_000, 4)],
      [`${id}-hemd`, sample(5000, 25)],
    ]),
  )
  const alone = byLabel(checks(own))
  for (const [label] of loads) {
    t.match(alone[`${label} req/s / bare`], { measured: 0.25, limit: 0.3, pass: false }, `${label}: 25% misses`)
    t.match(alone[`${label} p99 / bare p99`], { measured: 6.25, limit: 6, pass: false }, `${label}: 6.25x misses`)
    t.notOk(alone[`${label} req/s / bus ceiling (b)`], `${label}: no (b) target without (b)`)
  }
  const withBus = byLabel(checks({ ...own, b: sample(4000, 5) }))
  for (const [label] of loads)
    t.match(withBus[`${label} req/s / bus ceiling (b)`], { measured: 1.25, relation: '>=', limit: 1, pass: true })
  const slower = byLabel(checks({ ...own, b: sample(6000, 5) }))
  for (const [label] of loads) t.equal(slower[`${label} req/s / bus ceiling (b)`]!.pass, false, `${label} under (b)`)
})

t.test('ECDH and the post-quantum loads keep their targets, without (b)', async (t) => {
  const at = byLabel(
    checks({
      b: sample(1000, 1),
      'ecdh-bare': sample(1000, 10),
      'ecdh-hemd': sample(200, 100),
      'mlkem-bare': sample(1000, 10),
      'mlkem-hemd': sample(600, 100),
      'mldsa-bare': sample(100, 800),
      'mldsa-hemd': sample(59, 8001),
    }),
  )
  t.match(at['ECDH decrypt req/s / bare'], { limit: 0.2, pass: true })
  t.match(at['ECDH decrypt p99 / bare p99'], { limit: 10, pass: true })
  t.match(at['ML-KEM-768 encaps req/s / bare'], { limit: 0.6, pass: true })
  t.match(at['ML-DSA-65 sign req/s / bare'], { limit: 0.6, pass: false })
  t.match(at['ML-DSA-65 sign p99 / bare p99'], { limit: 10, pass: false })
  for (const label of ['ECDH decrypt', 'ML-KEM-768 encaps', 'ML-DSA-65 sign'])
    t.notOk(at[`${label} req/s / bus ceiling (b)`], `${label}: no (b) target`)
})

t.test('status >= 70% of the bare TLS GET; RSS <= 150 MB; boot <= 1.5 s, fresh <= 0.4 s', async (t) => {
  const MB = 1024 * 1024
  const pass = byLabel(
    checks(
      { 'd-bare': sample(10_000, 2), 'd-hemd': sample(7000, 3) },
      { peakRssBytes: 150 * MB, boot: { ms: 1500, records: 100_000 }, freshBootMs: 400 },
    ),
  )
  t.match(pass['status req/s / bare TLS GET'], { measured: 0.7, limit: 0.7, pass: true })
  t.match(pass['hemd peak RSS (VmHWM)'], { measured: 150, limit: 150, unit: 'MB', pass: true })
  t.match(pass['boot to ready, 100000 records'], { measured: 1500, limit: 1500, unit: 'ms', pass: true })
  t.match(pass['boot to ready, fresh device'], { measured: 400, limit: 400, unit: 'ms', pass: true })
  const miss = byLabel(
    checks(
      { 'd-bare': sample(10_000, 2), 'd-hemd': sample(6999, 3) },
      { peakRssBytes: 151 * MB, boot: { ms: 1501, records: 100_000 }, freshBootMs: 401 },
    ),
  )
  t.equal(miss['status req/s / bare TLS GET']!.pass, false)
  t.equal(miss['hemd peak RSS (VmHWM)']!.pass, false)
  t.equal(miss['boot to ready, 100000 records']!.pass, false)
  t.equal(miss['boot to ready, fresh device']!.pass, false)
})

t.test('a target whose scenarios did not run is left out', async (t) => {
  t.same(checks({ c: sample(3000, 12) }), [], 'encrypt without its baselines has no target')
  t.same(
    checks({ 'd-bare': sample(10_000, 2), 'd-hemd': sample(7000, 3) }).map((c) => c.label),
    ['status req/s / bare TLS GET'],
  )
})

t.test(
  "the metrics' cost: the median of each round's req/s ratio, metered over unmetered, at least 0.97",
  async (t) => {
    const rps = (...values: number[]) => values.map((v) => sample(v, 1))
    // Round 2 ran on a busier host: its pair is slower on both sides, which a ratio of medians would mix up.
    const rounds = {
      'enc-metered': rps(1000, 600, 990),
      'enc-unmetered': rps(1010, 610, 1000),
      'st-metered': rps(5000, 2500, 4800),
      'st-unmetered': rps(5000, 2700, 5000),
    }
    const at = byLabel(checks({}, { rounds }))
    const encrypt = at['encrypt req/s with metrics / without']!
    t.ok(Math.abs(encrypt.measured - 0.99) < 1e-9, `each round's ratio, then their median: ${encrypt.measured}`)
    t.equal(encrypt.pass, true)
    const status = at['status req/s with metrics / without']!
    t.ok(Math.abs(status.measured - 0.96) < 1e-9, `${status.measured}`)
    t.equal(status.pass, false, '4 % slower misses')
    t.equal(checks({}, { rounds: { 'enc-metered': rps(1) } }).length, 0, 'a pair that did not run is left out')
  },
)
