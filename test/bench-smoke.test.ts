// `npm run bench` run once with tiny settings, so that the harness cannot rot between full runs.
// It checks that every scenario really loaded its server with good requests, not the numbers:
// speed targets are met in the full benchmark, never in timed tests.
import t from 'tap'
import { distDir } from './helpers/device.js'
import { runToEnd } from './helpers/hemd-process.js'
import { renderReport } from '../bench/render-report.js'
import type { BenchSummary } from '../bench/run-bench.js'
import { SCALING_CONNECTIONS } from '../bench/scenarios.js'

const bench = `${distDir}/bench/run.js`
const SCENARIOS = [
  'a',
  'b',
  'c',
  'dec-bare',
  'dec-hemd',
  'ecdh-bare',
  'ecdh-hemd',
  'eddsa-bare',
  'eddsa-hemd',
  'ecdsa-bare',
  'ecdsa-hemd',
  'hmac-bare',
  'hmac-hemd',
  'mlkem-bare',
  'mlkem-hemd',
  'mldsa-bare',
  'mldsa-hemd',
  'd-bare',
  'd-hemd',
  'login',
  'log-bare',
  'log-hemd',
  'up-bare',
  'up-hemd',
]
const RECORDS = 2000
const TARGETS = [
  'encrypt req/s / bare ceiling (a)',
  'encrypt req/s / bus ceiling (b)',
  'encrypt p99 / bare ceiling (a) p99',
  ...[
    'decrypt',
    'ECDH decrypt',
    'Ed25519 sign',
    'ECDSA P-256 sign',
    'HMAC-SHA-256',
    'ML-KEM-768 encaps',
    'ML-DSA-65 sign',
  ].flatMap((what) => [`${what} req/s / bare`, `${what} p99 / bare p99`]),
  // (b) ran: the journaled cheap operations are held to it too.
  ...['decrypt', 'Ed25519 sign', 'ECDSA P-256 sign', 'HMAC-SHA-256'].map((what) => `${what} req/s / bus ceiling (b)`),
  'status req/s / bare TLS GET',
  'login p50 / the 500 ms floor',
  'log download MB/s / bare file',
  '16 MiB upload MB/s / bare upload',
  'hemd peak RSS (VmHWM)',
  `boot to ready, ${RECORDS} records`,
  'boot to ready, fresh device',
]

/** The timed exchanges (group timings) and their targets, each with its bounds. */
const TIMINGS = ['login-0', 'login-3', 'login-4par', 'ejwt-parse', 'ejwt-413', 'upload-408', 'outage-enc', 'reboot']
const TIMING_TARGETS = [
  'login, no failure counted',
  'login, no failure counted',
  'login after 3 failures',
  'login after 3 failures',
  '4 parallel wrong guesses',
  '4 parallel wrong guesses',
  '10 MB eJWT refused (parse)',
  'stalled upload to 408, dosprot 1',
  'slowest encrypt, bus outage',
  'reboot with dangling requests',
]

/** The smallest run: half a second, two connections, one round, a small journal. */
const TINY = ['--duration', '0.5', '--connections', '2', '--rounds', '1', '--journal-records', String(RECORDS)]

// The runs are independent bench processes, each mostly waiting on its servers: two side by side. Four
// at once start a dozen servers together beside the suite's other files, and a loaded host then missed
// a 10 s command deadline in a bench's set-up.
t.jobs = 2

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

t.test('one tiny run: every scenario answered 2xx only, and the report has every target line', async (t) => {
  // A small journal keeps the data dir's first build (once per build) short.
  const run = await runToEnd(bench, [
    ...TINY,
    '--boots',
    '1',
    // The timings have a run of their own below.
    '--only',
    'encrypt,decrypt,ecdh,sign,hmac,pqc,status,login,download,upload,boot',
  ])
  t.equal(run.code, 0, `exit code (stderr: ${run.stderr})`)
  for (const id of SCENARIOS) {
    // id, req/s, MB/s, p50, p99, 2xx, errors, non-2xx, title
    const row = new RegExp(
      `^${escape(id)}\\s+[\\d.]+\\s+(?:[\\d.]+|-)\\s+[\\d.]+\\s+[\\d.]+\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s`,
      'm',
    ).exec(run.stdout)
    if (!row) {
      t.fail(`no report line for ${id}`, { stdout: run.stdout })
      continue
    }
    t.ok(Number(row[1]) > 0, `${id}: requests answered 2xx`)
    t.equal(Number(row[2]), 0, `${id}: no errors`)
    t.equal(Number(row[3]), 0, `${id}: no non-2xx answers`)
  }
  for (const label of TARGETS) t.match(run.stdout, new RegExp(`^  ${escape(label)} .*(PASS|MISS)$`, 'm'), label)
  t.match(
    run.stdout,
    new RegExp(`^boot to ready, ${RECORDS} journal records: median \\d+ ms`, 'm'),
    'the boots are reported',
  )
  t.match(run.stdout, /^boot to ready, fresh device: median \d+ ms/m, "a fresh device's boots too")
  t.match(run.stdout, /^machine: \d+ cpus .*node v\d+/m)
})

t.test('--only runs the groups named, and --json has their results', async (t) => {
  const run = await runToEnd(bench, [...TINY, '--only', 'status', '--json'])
  t.equal(run.code, 0, `exit code (stderr: ${run.stderr})`)
  const summary = JSON.parse(run.stdout) as {
    scenarios: { id: string; median: { ok: number } }[]
    targets: { label: string; pass: boolean }[]
    boot?: unknown
    freshBoot?: unknown
    scaling?: unknown
  }
  t.same(
    summary.scenarios.map((s) => s.id),
    ['d-bare', 'd-hemd'],
  )
  t.ok(
    summary.scenarios.every((s) => s.median.ok > 0),
    'both answered 2xx',
  )
  t.same(
    summary.targets.map((x) => x.label),
    ['status req/s / bare TLS GET', 'hemd peak RSS (VmHWM)'],
  )
  t.equal(summary.boot, undefined, 'no boots without the boot group')
  t.equal(summary.freshBoot, undefined)
  t.equal(summary.scaling, undefined, 'no scaling table without the scaling group')
})

t.test('--only scaling: each connection count answered, its batch size counted on the bus', async (t) => {
  // Three seconds: 512 TLS handshakes and the first answers to them can take more than one on a busy host.
  const run = await runToEnd(bench, [...TINY, '--duration', '3', '--only', 'scaling', '--json'])
  t.equal(run.code, 0, `exit code (stderr: ${run.stderr})`)
  // The JSON of the summary the report is made of (no NaN in it: every load answered).
  const summary = JSON.parse(run.stdout) as BenchSummary
  t.same(
    summary.scenarios.map((s) => s.id),
    SCALING_CONNECTIONS.map((n) => `scale-${n}`),
  )
  t.same(
    summary.scaling!.map((r) => r.connections),
    SCALING_CONNECTIONS,
  )
  for (const { id, median, bus } of summary.scenarios) {
    t.ok(median.ok > 0 && median.errors === 0 && median.non2xx === 0, `${id}: 2xx answers only`)
    const [round] = bus!.rounds
    t.equal(round!.requests, median.ok, `${id}: the batch is of the 2xx answers`)
    // Every request crossed the bus in some message: at least one message, at most one per request
    // (and one per connection still in flight when the load stopped).
    t.ok(round!.messages >= 1, `${id}: the gateway published`)
    t.equal(bus!.batch, round!.requests / round!.messages, `${id}: requests over messages`)
  }
  const one = summary.scenarios[0]!.bus!.rounds[0]!
  t.ok(one.messages <= one.requests + 1, 'one connection: never more than a message per request (+1 in flight)')
  const table = renderReport(summary)
  for (const { connections, batch } of summary.scaling!)
    t.match(table, new RegExp(`^  ${connections}\\s+\\d+\\s+[\\d.]+\\s+[\\d.]+\\s+${batch.toFixed(2)}$`, 'm'))
})

t.test('--only timings: every timed exchange ended as it must, and has its targets', async (t) => {
  const run = await runToEnd(bench, [
    '--rounds',
    '1',
    '--journal-records',
    String(RECORDS),
    '--only',
    'timings',
    '--json',
  ])
  t.equal(run.code, 0, `exit code (stderr: ${run.stderr})`)
  const summary = JSON.parse(run.stdout) as {
    scenarios: unknown[]
    timings: { id: string; ms: number[] }[]
    targets: { label: string }[]
  }
  t.same(summary.scenarios, [], 'no loads')
  t.same(
    summary.timings.map((x) => x.id),
    TIMINGS,
  )
  t.ok(
    summary.timings.every((x) => x.ms.length === 1 && x.ms[0]! >= 0),
    'one time per round each',
  )
  t.same(
    summary.targets.map((x) => x.label),
    TIMING_TARGETS,
  )
})

t.test(
  '--only approvals: hem-cloud and its baseline both approved, none failed, and the report has both rows',
  async (t) => {
    const run = await runToEnd(bench, [...TINY, '--only', 'approvals', '--json'])
    t.equal(run.code, 0, `exit code (stderr: ${run.stderr})`)
    const summary = JSON.parse(run.stdout) as BenchSummary
    t.same(summary.scenarios, [], 'no loads of hemd')
    const { devices, cloud, baseline } = summary.approvals!
    t.equal(devices, 100)
    for (const [side, sample] of [
      ['hem-cloud', cloud],
      ['baseline', baseline],
    ] as const) {
      t.ok(sample.approvals > 0 && sample.failed === 0, `${side}: approvals, none failed`)
      t.ok(sample.p50 > 0 && sample.p99 >= sample.p50, `${side}: latencies`)
    }
    t.match(renderReport(summary), /^ {2}hem-cloud \/ baseline: approvals\/s [\d.]+, p50 [\d.]+x, p99 [\d.]+x$/m)
  },
)

t.test('bad flags are usage errors, before anything starts', async (t) => {
  for (const [args, message] of [
    [['--rounds', '0'], /--rounds wants a positive integer/],
    [['--only', 'encrypt,nope'], /--only knows encrypt, .*, not nope/],
  ] as const) {
    const run = await runToEnd(bench, [...args])
    t.equal(run.code, 2, args.join(' '))
    t.match(run.stderr, message)
  }
})
