import type { Logger } from 'pino'
import { getHeapStatistics } from 'node:v8'
import {
  FAULT_EVENTS,
  type FaultEventType,
  FLS,
  type JournalEntry,
  LogResult,
  LogType,
  SerialQueue,
  type TemperatureRange,
} from '../../protocol/index.js'
import type { Hal, TemperatureSensor } from '../../hal/index.js'
import { type healthMachine, machineRegistry, versioned, type HealthEvent } from '../../machines/index.js'
import { type JournalPort, MachineRunner } from '../host/index.js'

/** A fault some part of the device found: the health machine raises its bit and journals it once. */
export interface FaultReport {
  fault: FaultEventType
  /** Which service (or check) found it. */
  source: string
  /** What the journal should say about it; never a secret. */
  detail?: Record<string, unknown>
}

export interface HeapReading {
  used: number
  limit: number
}

export interface HealthMonitorOptions {
  hal: Hal
  journal: JournalPort
  logger: Logger
  temperatureRange: TemperatureRange
  /** The chip's sensor as the device reads it, when not the HAL's (a DIAG build can break it). */
  temperature?: TemperatureSensor
  /** The heap now; tests replace the process's own. */
  heap?: () => HeapReading
  /** Called after fls_state changed. */
  onChange(): void
}

/** The heap counts as exhausted above this share of its limit... */
const HEAP_HIGH_WATER = 0.9
/** ...for this many samples in a row: a moment of garbage before a collection is not a fault. */
const HEAP_HIGH_SAMPLES = 3
/** A temperature fault clears only this far inside the range, so a reading at the edge does not flap. */
const TEMPERATURE_HYSTERESIS = 2
/**
 * Drawn at every sample, so that a source nobody else reads is still tested: three APT windows
 * hold two whole ones, whatever the phase of the window the tests are in.
 */
const ENTROPY_SAMPLE_BYTES = 3 * 512

const processHeap = (): HeapReading => {
  const stats = getHeapStatistics()
  return { used: stats.used_heap_size, limit: stats.heap_size_limit }
}

/**
 * Owns `fls_state` through the health machine: every fault found (by the start-up tests, the
 * periodic samples, a self-test or another service) becomes one journaled transition and one
 * audit record of the family's type, in the order found.
 */
export class HealthMonitor {
  private readonly runner: MachineRunner<typeof healthMachine>
  private readonly queue = new SerialQueue()
  private heapHigh = 0

  constructor(private readonly o: HealthMonitorOptions) {
    this.runner = new MachineRunner(versioned(machineRegistry.health), o.journal)
  }

  get fls(): number {
    return this.runner.snapshot.context.fls
  }

  /** What the boot found (a failed entropy start-up test stops the boot before any service), then the sensors. */
  async start(): Promise<void> {
    const journal = await this.o.journal.status()
    if (!journal.intact)
      await this.report({ fault: 'INTEGRITY_FAILED', source: 'journal', detail: { file: journal.fileId } })
    await this.sample()
  }

  /** Raises the fault's bit unless it is raised already (the machine takes a fault once); resolves once journaled. */
  report(report: FaultReport): Promise<void> {
    return this.serially(async () => {
      if (!this.runner.can({ type: report.fault })) return
      const bit = FAULT_EVENTS[report.fault]
      // What the reporter found goes under its own key: it cannot stand in for the bits or the source.
      const detail = report.detail ? { detail: report.detail } : {}
      this.o.logger.error({ fault: report.fault, source: report.source, ...detail }, 'fail state raised')
      await this.step(
        { type: report.fault },
        {
          type: report.fault === 'ENTROPY_FAILED' ? LogType.TRNG_FAILED : LogType.NON_SECURE_STATE,
          result: LogResult.ERROR,
          data: { fls: this.fls | bit, raised: bit, source: report.source, ...detail },
        },
      )
    })
  }

  /** Reads the sensors once: temperature (raises and clears), the entropy source, the heap. */
  sample(): Promise<void> {
    return this.serially(async () => {
      const celsius = (this.o.temperature ?? this.o.hal.temperature).readCelsius()
      const { min, max } = this.o.temperatureRange
      if (celsius < min || celsius > max) {
        if (this.runner.can({ type: 'TEMPERATURE_OUT_OF_RANGE' })) {
          this.o.logger.error({ celsius, min, max }, 'temperature out of range')
          await this.step(
            { type: 'TEMPERATURE_OUT_OF_RANGE' },
            {
              type: LogType.NON_SECURE_STATE,
              result: LogResult.ERROR,
              data: {
                fls: this.fls | FLS.TEMPERATURE,
                raised: FLS.TEMPERATURE,
                source: 'sensor',
                temp: celsius,
                min,
                max,
              },
            },
          )
        }
      } else if (
        this.runner.can({ type: 'TEMPERATURE_IN_RANGE' }) &&
        celsius >= min + TEMPERATURE_HYSTERESIS &&
        celsius <= max - TEMPERATURE_HYSTERESIS
      ) {
        this.o.logger.warn({ celsius }, 'temperature back in range')
        await this.step(
          { type: 'TEMPERATURE_IN_RANGE' },
          {
            type: LogType.NON_SECURE_STATE,
            result: LogResult.OK,
            data: { fls: this.fls & ~FLS.TEMPERATURE, cleared: FLS.TEMPERATURE, source: 'sensor', temp: celsius },
          },
        )
      }
    }).then(() => this.sampleEntropyAndHeap())
  }

  private async sampleEntropyAndHeap(): Promise<void> {
    const failure = this.drawEntropy()
    if (failure) await this.report({ fault: 'ENTROPY_FAILED', source: 'continuous', detail: { test: failure } })
    const heap = (this.o.heap ?? processHeap)()
    this.heapHigh = heap.used > heap.limit * HEAP_HIGH_WATER ? this.heapHigh + 1 : 0
    if (this.heapHigh >= HEAP_HIGH_SAMPLES) {
      await this.report({ fault: 'ALLOCATION_FAILED', source: 'heap', detail: { used: heap.used, limit: heap.limit } })
    }
  }

  /** The test that failed, if one did; drawn bytes are discarded. */
  private drawEntropy(): string | undefined {
    const { entropy } = this.o.hal
    if (!entropy.failure) {
      try {
        entropy.read(ENTROPY_SAMPLE_BYTES).fill(0)
      } catch {
        // the failure is latched in entropy.failure
      }
    }
    return entropy.failure?.test
  }

  /** Orders a check-in's lock or shutdown: terminal for this boot, so an order already in force changes nothing. */
  order(type: 'CHECKIN_LOCK' | 'CHECKIN_SHUTDOWN', entry: JournalEntry): Promise<void> {
    return this.serially(async () => {
      if (this.runner.can({ type })) await this.step({ type }, entry)
    })
  }

  private async step(event: HealthEvent, entry: JournalEntry): Promise<void> {
    const before = this.fls
    await this.runner.send(event, [entry])
    if (this.fls !== before) this.o.onChange()
  }

  private serially(work: () => Promise<void>): Promise<void> {
    return this.queue.run(work)
  }
}
