import type { Logger } from 'pino'
import {
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  LogResult,
  LogType,
  SYSTEM_DIAG_OPS,
} from '../../protocol/index.js'
import type { OperationSpec } from '../../bus/index.js'
import type { TemperatureSensor, TestedEntropySource } from '../../hal/index.js'
import { type JournalPort, journalSubject } from '../host/index.js'

/** What the sensor reads once `break_temp` broke it: far above the industrial range (85 °C). */
export const BROKEN_CELSIUS = 125
/** `break_trng`'s `mode`: the source's failure is forced. */
const FORCED_FAILURE_MODE = 1
/** `test_trng`'s raw sample. */
const RAW_SAMPLE_BYTES = 8192

export interface DiagFaultsOptions {
  logger: Logger
  journal: JournalPort
  sensor: TemperatureSensor
  entropy: TestedEntropySource
  /** Samples the sensors now: a fault injected shows in fls_state before the answer. */
  sample(): Promise<void>
  /** Stops the periodic self-tests until the next boot. */
  disableSelfTests(): void
}

/**
 * The system service's faults of the DIAG build (crypto-contract §6), held in memory only: the next boot (a new
 * system actor, and the entropy source's power-up) has none of them. The gateway alone may send these operations
 * (bus permissions) and only a device started with --diag serves them.
 */
export class DiagFaults {
  private hot = false

  constructor(private readonly o: DiagFaultsOptions) {}

  /** The chip's temperature as the device reads it: the real sensor's, until `break_temp`. */
  readonly temperature: TemperatureSensor = {
    readCelsius: () => (this.hot ? BROKEN_CELSIUS : this.o.sensor.readCelsius()),
  }

  operations(): Record<(typeof SYSTEM_DIAG_OPS)[number], OperationSpec> {
    return {
      diag_break_temp: { handler: (req) => this.breakTemperature(req) },
      diag_break_trng: { handler: (req) => this.breakEntropy(req) },
      diag_test_trng: { handler: (req) => this.rawSample(req) },
      diag_disable_selftest: { handler: (req) => this.disableSelfTests(req) },
    }
  }

  private async breakTemperature(req: CommandRequest): Promise<CommandReply> {
    this.o.logger.warn({ rid: req.rid, celsius: BROKEN_CELSIUS }, 'DIAG break_temp: the temperature sensor is broken')
    this.hot = true
    await this.o.sample()
    return { status: 200 }
  }

  /**
   * The noise source repeats one byte from now on; the health tests sample it at once and fail. `last_val` is read
   * after that sample, so it is a byte of the broken source (or of a window the tests threw away), never one that
   * went out as randomness.
   */
  private async breakEntropy(req: CommandRequest): Promise<CommandReply> {
    this.o.logger.warn({ rid: req.rid }, 'DIAG break_trng: the entropy source delivers stuck bytes')
    const { entropy } = this.o
    entropy.raw.forceFailure()
    await this.o.sample()
    const tested = entropy.lastTestedAt
    return {
      status: 200,
      body: {
        mode: FORCED_FAILURE_MODE,
        last_ts: tested === undefined ? 0 : Math.floor(tested / 1000),
        last_val: entropy.raw.lastByte ?? 0,
      },
    }
  }

  /** Bytes straight from the noise source, which nothing else uses: a drawn sample for outside analysis. */
  private rawSample(req: CommandRequest): CommandReply {
    this.o.logger.warn({ rid: req.rid, bytes: RAW_SAMPLE_BYTES }, 'DIAG test_trng: a raw sample of the entropy source')
    let sample: Uint8Array
    try {
      sample = this.o.entropy.raw.read(RAW_SAMPLE_BYTES)
    } catch (err) {
      this.o.logger.error({ rid: req.rid, err: (err as Error).message }, 'DIAG test_trng: the source delivered nothing')
      return fail(503, 'entropy_unavailable', 'The entropy source delivered nothing; try again')
    }
    return { status: 200, body: { rnd: encodeBase64(sample) } }
  }

  /**
   * A change of the device's configuration for this boot, journaled as one (CONFIG_UPDATED, `diag: true`) before
   * it takes effect: an auditor sees why no periodic self-test follows. No record, no change (the journal's
   * failure is the answer).
   */
  private async disableSelfTests(req: CommandRequest): Promise<CommandReply> {
    this.o.logger.warn({ rid: req.rid }, 'DIAG disable_selftest: no periodic self-test until the next boot')
    await this.o.journal.append([
      {
        type: LogType.CONFIG_UPDATED,
        result: LogResult.OK,
        ...journalSubject(req.principal),
        data: { source: 200, rid: req.rid, periodic_selftest: false, diag: true },
      },
    ])
    this.o.disableSelfTests()
    return { status: 200 }
  }
}
