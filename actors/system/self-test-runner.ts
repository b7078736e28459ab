import { randomUUID, verify } from 'node:crypto'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import {
  type CommandRequest,
  DEADLINE_MS,
  LogResult,
  LogType,
  type RecordCheck,
  type SelfTestAnswer,
  type SelfTestRepoStats,
  SerialQueue,
  Subjects,
  VERIFY_RECORDS_OP,
} from '../../protocol/index.js'
import { callService } from '../../bus/index.js'
import { type CryptoEngine, ed25519PublicKey, type Hal, type Timer } from '../../hal/index.js'
import { type JournalPort, journalSubject } from '../host/index.js'
import type { HealthMonitor } from './health-monitor.js'
import { runSelfTest } from './self-test.js'

/** How often a self-test runs by itself (crypto-contract §6 `disable_selftest` stops it). */
export const DEFAULT_SELF_TEST_INTERVAL_MS = 300_000

/** Signed by the enclave's log key and checked, for `se_state`: the enclave answers and its key is the one it shows. */
const SE_PROBE = Buffer.from('hemd self-test: the secure element answers')

/** The key store did not check its records: the self-test is not complete, and no answer pretends it is. */
export class RecordCheckUnavailableError extends Error {
  override readonly name = 'RecordCheckUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

export interface SelfTestRunnerOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  health: HealthMonitor
  /** The crypto engine whose KATs count: the one the keystore chose at boot. */
  engine(): CryptoEngine
  intervalMs?: number
}

/** Who asked for a self-test: a principal over the API (journaled as source 200), or the timer. */
export type SelfTestCause = { req: CommandRequest } | 'periodic'

/**
 * Runs the self-test (crypto-contract §5): the known-answer tests, the entropy health tests on fresh samples and
 * the key store's check of every stored record; asked for over the API or every `intervalMs`, one at a time.
 * Each answer tells when the run before it happened and the fail state that run left; the boot's start-up tests
 * are the first run.
 */
export class SelfTestRunner {
  private readonly queue = new SerialQueue()
  private previous = { ts: 0, fls: 0 }
  private timer: Timer | undefined
  private periodic = true

  constructor(private readonly o: SelfTestRunnerOptions) {}

  /** Once the boot's start-up tests are done: they count as the run before the first. */
  start(): void {
    this.previous = { ts: this.nowSeconds(), fls: this.o.health.fls }
    // Unref'd: the next run must not keep a stopping process up.
    this.timer = this.o.hal.clock.timer(
      this.o.intervalMs ?? DEFAULT_SELF_TEST_INTERVAL_MS,
      () => void this.runPeriodic(),
      { repeat: true, unref: true },
    )
  }

  /** Periodic self-tests stop until the next boot (`diag_disable_selftest`); asked ones still run. */
  disablePeriodic(): void {
    this.periodic = false
    this.timer?.cancel()
    this.timer = undefined
  }

  stop(): Promise<void> {
    this.timer?.cancel()
    this.timer = undefined
    // A run under way finishes its journal entry before the journal closes.
    return this.queue.idle()
  }

  /** A whole self-test, now; RecordCheckUnavailableError when the key store does not answer (nothing ran). */
  run(cause: SelfTestCause): Promise<SelfTestAnswer> {
    return this.queue.run(() => this.runNow(cause))
  }

  private async runPeriodic(): Promise<void> {
    if (!this.periodic) return
    try {
      await this.run('periodic')
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'the periodic self-test did not run; it is tried again later')
    }
  }

  private async runNow(cause: SelfTestCause): Promise<SelfTestAnswer> {
    const { hal, health } = this.o
    const selftestTs = this.nowSeconds()
    const rid = cause === 'periodic' ? randomUUID() : cause.req.rid
    // First: without the key store's answer there is no self-test to report, and nothing else has run.
    const records = await this.checkRecords(rid)
    const engine = this.o.engine()
    const result = runSelfTest(engine, hal.entropy)
    const katTs = this.nowSeconds()
    const passed = result.failedKats.length === 0 && !result.entropy && records.intact
    await this.o.journal.append([
      {
        type: LogType.SELFTEST_PASSED,
        result: passed ? LogResult.OK : LogResult.FAILED,
        ...(cause === 'periodic' ? {} : journalSubject(cause.req.principal)),
        data: {
          ...(cause === 'periodic' ? { source: 'periodic' } : { source: 200, rid }),
          engine: engine.name,
          ...(passed
            ? {}
            : {
                failed: result.failedKats,
                entropy: result.entropy?.test ?? 'ok',
                records: records.intact ? 'ok' : 'damaged',
              }),
        },
      },
    ])
    if (result.failedKats.length > 0)
      await health.report({ fault: 'KAT_FAILED', source: 'selftest', detail: { failed: result.failedKats } })
    if (result.entropy)
      await health.report({ fault: 'ENTROPY_FAILED', source: 'selftest', detail: { test: result.entropy.test } })
    if (!records.intact) {
      const { invalid } = records.repo_stats
      await health.report({ fault: 'INTEGRITY_FAILED', source: 'selftest', detail: { invalid } })
    }
    const lastTested = hal.entropy.lastTestedAt
    const answer: SelfTestAnswer = {
      last_selftest_ts: this.previous.ts,
      last_fls_state: this.previous.fls,
      last_entropytest_ts: lastTested === undefined ? 0 : Math.floor(lastTested / 1000),
      last_kat_ts: katTs,
      fls_state: health.fls,
      selftest_ts: selftestTs,
      repo_stats: records.repo_stats,
      ...(hal.variant === 'P' ? { se_state: this.seState() } : {}),
    }
    this.previous = { ts: selftestTs, fls: answer.fls_state }
    return answer
  }

  private async checkRecords(rid: string): Promise<RecordCheck> {
    let reply
    try {
      reply = await callService(
        this.o.nc,
        new Subjects(this.o.hal.devid).command('keystore', VERIFY_RECORDS_OP),
        { rid, tls: false },
        DEADLINE_MS.short,
        'the key store did not check its records',
      )
    } catch (err) {
      throw new RecordCheckUnavailableError('the key store did not check its records', { cause: err })
    }
    const check = reply.status === 200 ? recordCheck(reply.body) : undefined
    if (!check) throw new RecordCheckUnavailableError(`the key store answered its record check with ${reply.status}`)
    return check
  }

  /** 0 while the enclave signs with the log key it shows; 1 when it does not answer or its signature fails. */
  private seState(): number {
    try {
      const signer = this.o.hal.enclave.logSigner
      return verify(null, SE_PROBE, ed25519PublicKey(signer.publicKey), signer.sign(SE_PROBE)) ? 0 : 1
    } catch (err) {
      this.o.logger.error({ err: (err as Error).message }, 'the secure element failed its self-test')
      return 1
    }
  }

  private nowSeconds(): number {
    return Math.floor(this.o.hal.clock.now() / 1000)
  }
}

const STAT_FIELDS = ['total', 'deleted', 'invalid', 'fragmented', 'freeslots'] as const

/** The key store's answer, checked field by field: a malformed one counts as no answer (fail closed). */
function recordCheck(body: unknown): RecordCheck | undefined {
  const { intact, newlyInvalid, repo_stats: stats } = (body ?? {}) as Partial<Record<keyof RecordCheck, unknown>>
  if (typeof intact !== 'boolean' || !count(newlyInvalid) || typeof stats !== 'object' || stats === null) return
  const fields = stats as Record<string, unknown>
  const repoStats: Partial<SelfTestRepoStats> = {}
  for (const field of STAT_FIELDS) {
    const value = fields[field]
    if (!count(value)) return
    repoStats[field] = value
  }
  // Only the five fields, whatever else came: the answer passes them on to the client as they are.
  return { intact, newlyInvalid, repo_stats: repoStats as SelfTestRepoStats }
}

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0
