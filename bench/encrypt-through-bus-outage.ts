import { readFile } from 'node:fs/promises'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { encryptRequestBody } from './encrypt-request.js'
import type { HemdTarget } from './hemd-target.js'
import { TimingError } from './timing-error.js'

const ENCRYPT = '/api/crypto/cipher/encrypt'
/** Concurrent clients, each sending its next encrypt once the last is answered. */
const LANES = 8
/** Encrypts answered before the bus is killed, and on each lane after it is back. */
const BEFORE = 100
const AFTER_PER_LANE = 10
/** The gateway's bus timeout (10 s) and some: an answer later than this is a hang. */
const REQUEST_TIMEOUT_MS = 12_000
const PHASE_TIMEOUT_MS = 60_000

export interface OutageSample {
  /** The slowest encrypt answer of the run, in ms. */
  slowestMs: number
  answered: number
  /** Answered 503 bus_unavailable while the bus was down. */
  unavailable: number
  /** Answered 504 timeout: sent to the keystore before the bus dropped, so they may have run. */
  timedOut: number
}

interface Outcome {
  lane: number
  sent: number
  ms: number
  status: number
}

/**
 * Encrypts on LANES clients while the device's own nats-server is killed (SIGKILL, as
 * test/fault-survival.test.ts does) and hemd starts it again: the slowest answer of the run.
 * Every answer must be a 200, a 503 bus_unavailable, or a 504 timeout for an encrypt already sent
 * when the bus dropped; a dropped connection or a hang fails it.
 */
export async function measureEncryptThroughBusOutage(hemd: HemdTarget, dataDir: string): Promise<OutageSample> {
  const pidFile = join(dataDir, 'run', 'nats', 'nats-server.pid')
  const agent = new Agent({ keepAlive: true, maxSockets: LANES })
  const outcomes: Outcome[] = []
  let running = true
  let failure: Error | undefined
  const body = encryptRequestBody(hemd.kid)
  // A token of this boot: a round's reboot killed the ones before it.
  const token = await hemd.client.token(`keymgmt:use:${hemd.kid}`, true)
  const lane = async (i: number) => {
    while (running && !failure) {
      const sent = performance.now()
      try {
        const status = await encrypt(hemd.httpsUrl + ENCRYPT, token, body, agent)
        if (status !== 200 && status !== 503 && status !== 504)
          throw new TimingError(`an encrypt was answered ${status}`)
        outcomes.push({ lane: i, sent, ms: performance.now() - sent, status })
      } catch (error) {
        failure ??= error as Error
      }
    }
  }
  const lanes = Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)))
  const until = async (what: string, done: () => boolean | Promise<boolean>) => {
    const deadline = performance.now() + PHASE_TIMEOUT_MS
    while (!(await done())) {
      if (failure) throw failure
      if (performance.now() > deadline) throw new TimingError(`${what}: not within ${PHASE_TIMEOUT_MS} ms`)
      await sleep(5)
    }
  }
  try {
    await until('encrypts before the outage', () => outcomes.filter((o) => o.status === 200).length >= BEFORE)
    const pid = await natsPid(pidFile)
    process.kill(pid, 'SIGKILL')
    await until('nats-server gone', () => !alive(pid))
    await until('a new nats-server', async () => {
      const next = await natsPid(pidFile).catch(() => pid)
      return next > 0 && next !== pid && alive(next)
    })
    const upAt = performance.now()
    await until('encrypts on every lane after the outage', () =>
      Array.from(
        { length: LANES },
        (_, i) => outcomes.filter((o) => o.lane === i && o.sent >= upAt && o.status === 200).length,
      ).every((n) => n >= AFTER_PER_LANE),
    )
  } finally {
    running = false
    await lanes
    agent.destroy()
  }
  if (failure) throw failure
  return {
    slowestMs: Math.max(...outcomes.map((o) => o.ms)),
    answered: outcomes.filter((o) => o.status === 200).length,
    unavailable: outcomes.filter((o) => o.status === 503).length,
    timedOut: outcomes.filter((o) => o.status === 504).length,
  }
}

/** One encrypt; its status (a 503 must be bus_unavailable, a 504 timeout). */
function encrypt(url: string, token: string, body: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        rejectUnauthorized: false,
        servername: 'localhost',
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          const status = res.statusCode ?? 0
          if (
            (status === 503 && !text.includes('"bus_unavailable"')) ||
            (status === 504 && !text.includes('"timeout"'))
          )
            reject(new TimingError(`an encrypt was answered ${status} ${text.slice(0, 200)}`))
          else resolve(status)
        })
      },
    )
    req.on('timeout', () => req.destroy(new TimingError(`an encrypt was not answered in ${REQUEST_TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

async function natsPid(pidFile: string): Promise<number> {
  return Number((await readFile(pidFile, 'utf8')).trim())
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
