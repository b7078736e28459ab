// `npm run bench`: hemd against its baselines under a real load generator (issue 4's performance record).
import { parseArgs } from 'node:util'
import { renderReport } from './render-report.js'
import { runBench, type BenchSettings } from './run-bench.js'

const USAGE = `Usage: node dist/bench/run.js [--duration SECONDS] [--connections N] [--rounds N] [--json]

Measures, interleaved and in one run: (a) uWS + node:crypto AES-256-GCM, (b) uWS -> NATS -> echo,
(c) hemd's POST /api/crypto/cipher/encrypt, (d) a bare uWS GET and hemd's GET /api/system/status;
prints req/s, p50/p99, the ratios against the targets, and hemd's peak RSS.

  --duration SECONDS   per scenario and round (default 10)
  --connections N      concurrent connections of the load generator (default 32)
  --rounds N           interleaved rounds; the report takes the median (default 3)
  --json               print the whole result as JSON instead of the report
  -h, --help           this text

Exit codes: 0 done, 1 a scenario had errors or non-2xx answers (or a server did not start), 2 usage.
`

function parseSettings(argv: string[]): (BenchSettings & { json: boolean }) | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
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
    json: values.json,
  }
}

function positive(flag: string, text: string, integer: boolean): number {
  const value = Number(text)
  if (!(value > 0) || (integer && !Number.isInteger(value))) throw new TypeError(`${flag} wants a positive ${integer ? 'integer' : 'number'}, not ${text}`)
  return value
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
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => interrupt.abort(new Error(`interrupted by ${signal}`)))
  const summary = await runBench(load, (line) => process.stderr.write(`bench: ${line}\n`), interrupt.signal)
  process.stdout.write(json ? `${JSON.stringify(summary, null, 2)}\n` : renderReport(summary))
  const failing = summary.scenarios.filter((s) => s.median.errors > 0 || s.median.non2xx > 0 || s.median.ok === 0)
  for (const s of failing) {
    process.stderr.write(`bench: ${s.id} failed: ${s.median.ok} 2xx, ${s.median.errors} errors, ${s.median.non2xx} non-2xx; its numbers measure nothing\n`)
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
