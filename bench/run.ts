// `npm run bench`: hemd against its baselines under a real load generator (the performance record).
import { parseArgs } from 'node:util'
import { renderReport } from './render-report.js'
import { runBench, type BenchSettings } from './run-bench.js'
import { GROUPS, type Group } from './scenarios.js'

const USAGE = `Usage: node dist/bench/run.js [--duration SECONDS] [--connections N] [--rounds N]
                         [--boots N] [--journal-records N] [--only GROUP[,GROUP]] [--json]

Measures, interleaved and in one run, hemd (variant P, its journal holding --journal-records
records) against a baseline in its own process for each: encrypt (a: uWS + node:crypto, b: uWS ->
NATS -> echo, c: hemd), decrypt AES256-GCM, decrypt with X25519 ECDH (pubkey), sign (Ed25519,
ECDSA P-256), hmac (HMAC-SHA-256), pqc (ML-KEM-768 encaps, ML-DSA-65 sign; each of these against
the same primitive of the device's engines behind bare uWS), status (a bare uWS GET, HTTPS),
static (the app's /app.js: br, and br revalidated by its ETag, a 304, against the same file uncompressed),
scaling (encrypt as c at 1, 8, 32, 128 and 512 connections on a second hemd run with --bus on a
nats-server the bench watches: the commands per NATS message from the gateway, counted on the
bus), login (against its 500 ms floor), a journal file download and a 16 MiB upload (bare uWS
moving the same bytes); then hemd's peak RSS and its boot to ready replaying that journal.
The group timings times, once per round on a hemd of its own, the login brake's answers, a 10 MB
eJWT's refusal, a stalled upload's 408 (dosprot 1), the slowest encrypt while the device's
nats-server is killed and restarted, and a reboot with two requests waiting for their bodies.
Prints req/s, MB/s, p50/p99, the timings, and each target with PASS or MISS.

  --duration SECONDS     per scenario and round (default 6)
  --connections N        concurrent connections of the request loads (default 32; the download 4,
                         scaling its own)
  --rounds N             interleaved rounds; the report takes the median (default 3)
  --boots N              boots timed (default 3)
  --journal-records N    records of the journal hemd boots with (default 100000; the data dir is
                         built once per build and kept in var/bench-cache/)
  --only GROUP[,GROUP]   run only these of: ${GROUPS.join(', ')}
  --json                 print the whole result as JSON instead of the report
  -h, --help             this text

Exit codes: 0 done, 1 a scenario had errors or non-2xx answers (or a server did not start), 2 usage.
`

function parseSettings(argv: string[]): (BenchSettings & { json: boolean }) | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '6' },
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
      boots: { type: 'string', default: '3' },
      'journal-records': { type: 'string', default: '100000' },
      only: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) return 'help'
  return {
    duration: positive('--duration', values.duration, false),
    connections: positive('--connections', values.connections, true),
    rounds: positive('--rounds', values.rounds, true),
    boots: positive('--boots', values.boots, true),
    journalRecords: positive('--journal-records', values['journal-records'], true),
    groups: values.only === undefined ? GROUPS : groups(values.only),
    json: values.json,
  }
}

function positive(flag: string, text: string, integer: boolean): number {
  const value = Number(text)
  if (!(value > 0) || (integer && !Number.isInteger(value)))
    throw new TypeError(`${flag} wants a positive ${integer ? 'integer' : 'number'}, not ${text}`)
  return value
}

function groups(text: string): Group[] {
  const names = text.split(',')
  for (const name of names)
    if (!(GROUPS as readonly string[]).includes(name))
      throw new TypeError(`--only knows ${GROUPS.join(', ')}, not ${name}`)
  // In the order a round runs them, each once.
  return GROUPS.filter((g) => names.includes(g))
}

async function main(): Promise<number> {
  let settings: ReturnType<typeof parseSettings>
  try {
    settings = parseSettings(process.argv.slice(2))
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${USAGE}`)
    return 2
  }
  if (settings === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  const { json, ...load } = settings
  // The servers under test run in process groups of their own (a Ctrl-C reaches only the bench),
  // so that they are stopped once, in order, by the bench.
  const interrupt = new AbortController()
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => interrupt.abort(new Error(`interrupted by ${signal}`)))
  const summary = await runBench(load, (line) => process.stderr.write(`bench: ${line}\n`), interrupt.signal)
  process.stdout.write(json ? `${JSON.stringify(summary, null, 2)}\n` : renderReport(summary))
  const failing = summary.scenarios.filter((s) => s.median.errors > 0 || s.median.non2xx > 0 || s.median.ok === 0)
  for (const s of failing) {
    process.stderr.write(
      `bench: ${s.id} failed: ${s.median.ok} 2xx, ${s.median.errors} errors, ${s.median.non2xx} non-2xx; ` +
        'its numbers measure nothing\n',
    )
  }
  return failing.length > 0 ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).message}\n`)
    process.exit(1)
  },
)
