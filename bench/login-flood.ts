// `node dist/bench/login-flood.js`: the owner's login during a login flood from many addresses, in
// real time against a hemd process, and the wrong guesses the device checks per second (issue 35
// item 2; the design and the figures: docs/security.md, "Logging in").
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { Agent } from 'node:http'
import { buildLoginEjwt, derivePassphraseKeyAsync, type PassphraseKey, type TokenChallenge } from '../client/index.js'
import { BENCH_PASSPHRASES, startHemdTarget, type HemdTarget } from './hemd-target.js'
import type { FloodReport, FloodSpec } from './login-flood-worker.js'
import { tokenExchange } from './token-exchange.js'

const USAGE = `Usage: node dist/bench/login-flood.js [--flood ADDRESSESxCONNECTIONS[,...]] [--tries N]
                                   [--warmup SECONDS] [--window SECONDS] [--json]

Starts hemd (variant P, personalised) and, for each flood in turn, floods POST /api/auth/token
from ADDRESSES loopback addresses (127.1.0.1 onwards) with CONNECTIONS keep-alive connections
each, every one fetching a challenge and sending a wrong guess on it as fast as it is answered
(a worker thread). After --warmup seconds the owner logs in --tries times from 127.0.0.2, 1 to 4 s
apart (each timed from its POST to its answer); then the flood's 401s are counted for --window
seconds: each is a wrong guess the device checked.

  --flood LIST      default 1x8,64x4,256x2
  --tries N         the owner's logins per flood (default 5)
  --warmup SECONDS  from every connection's first answer to the owner's first try (default 5)
  --window SECONDS  the flood's checks counted (default 30)
  --json            print the result as JSON
  -h, --help        this text

Exit codes: 0 done, 1 hemd did not start or the owner was refused, 2 usage.
`

interface FloodResult {
  flood: string
  /** The owner's tries: status and ms from the POST to its answer. */
  owner: { status: number; ms: number }[]
  /** 401s (checked wrong guesses) per second over the window. */
  checkedPerSecond: number
  statuses: Record<number, number>
}

function floods(text: string): { addresses: number; connections: number }[] {
  return text.split(',').map((item) => {
    const [addresses, connections] = item.split('x').map(Number)
    if (!(Number.isInteger(addresses) && addresses! > 0 && Number.isInteger(connections) && connections! > 0))
      throw new TypeError(`--flood wants ADDRESSESxCONNECTIONS, not ${item}`)
    return { addresses: addresses!, connections: connections! }
  })
}

/** The owner's program: one keep-alive connection from its own address (the flood's are 127.1.x.y). */
const ownerAgent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' })

async function ownerTry(base: string, key: PassphraseKey): Promise<{ status: number; ms: number }> {
  const challenge = JSON.parse((await tokenExchange(ownerAgent, base, 'GET')).text) as TokenChallenge
  const auth = buildLoginEjwt(key, challenge, 'system:config', 60)
  const sent = performance.now()
  const { status } = await tokenExchange(ownerAgent, base, 'POST', JSON.stringify({ auth }))
  return { status, ms: Math.round(performance.now() - sent) }
}

async function runFlood(
  hemd: HemdTarget,
  key: PassphraseKey,
  spec: Omit<FloodSpec, 'base'>,
  settings: { tries: number; warmup: number; window: number },
): Promise<FloodResult> {
  const worker = new Worker(new URL('./login-flood-worker.js', import.meta.url), {
    workerData: { ...spec, base: hemd.url } satisfies FloodSpec,
  })
  try {
    await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject))
    await sleep(settings.warmup * 1000)
    const owner: FloodResult['owner'] = []
    for (let i = 0; i < settings.tries; i++) {
      // 1 to 4 s apart: at any phase of the device's pace of checks.
      if (i > 0) await sleep(1000 + Math.random() * 3000)
      owner.push(await ownerTry(hemd.url, key))
    }
    const from = Date.now()
    await sleep(settings.window * 1000)
    const to = Date.now()
    const report = await new Promise<FloodReport>((resolve, reject) => {
      worker.once('message', resolve).once('error', reject)
      worker.postMessage('stop')
    })
    const checked = report.refusedAt.filter((at) => at >= from && at < to).length
    return {
      flood: `${spec.addresses}x${spec.connections}`,
      owner,
      checkedPerSecond: Math.round((checked / ((to - from) / 1000)) * 100) / 100,
      statuses: report.statuses,
    }
  } finally {
    await worker.terminate()
  }
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      flood: { type: 'string', default: '1x8,64x4,256x2' },
      tries: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '5' },
      window: { type: 'string', default: '30' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const settings = { tries: Number(values.tries), warmup: Number(values.warmup), window: Number(values.window) }
  if (!(settings.tries >= 1 && settings.warmup >= 0 && settings.window > 0)) throw new TypeError('bad numbers')
  const specs = floods(values.flood)
  const dataDir = await mkdtemp(join(tmpdir(), 'hemd-login-flood-'))
  const hemd = await startHemdTarget(dataDir)
  try {
    const eid = (JSON.parse((await tokenExchange(ownerAgent, hemd.url, 'GET')).text) as TokenChallenge).eid
    const key = await derivePassphraseKeyAsync(BENCH_PASSPHRASES.user, eid)
    const results: FloodResult[] = []
    for (const spec of specs) results.push(await runFlood(hemd, key, spec, settings))
    if (values.json) process.stdout.write(`${JSON.stringify({ loadavg: loadavg(), results }, null, 2)}\n`)
    else {
      process.stdout.write(
        `load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}\n`,
      )
      for (const r of results)
        process.stdout.write(
          `${r.flood.padEnd(7)} owner ${r.owner.map((o) => `${o.status} ${o.ms} ms`).join(', ')}; ` +
            `checked wrong guesses ${r.checkedPerSecond}/s; answers ${JSON.stringify(r.statuses)}\n`,
        )
    }
    return results.every((r) => r.owner.every((o) => o.status === 200)) ? 0 : 1
  } finally {
    ownerAgent.destroy()
    await hemd.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`)
    process.exitCode = error instanceof TypeError ? 2 : 1
  },
)
