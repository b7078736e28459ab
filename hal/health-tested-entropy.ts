import { BreakableEntropy } from './breakable-entropy.js'
import { EntropyError } from './errors.js'
import { ContinuousHealthTests, DEVICE_HEALTH_TESTS, type HealthTestParameters } from './sp800-90b.js'
import type { Clock, EntropyFailure, EntropySource, RawEntropySource, TestedEntropySource } from './types.js'

/** SP 800-90B §4.3: the start-up tests run over at least 1024 consecutive samples. */
const STARTUP_SAMPLES = 1024

/** The entropy source failed a health test: it delivers nothing more until the device restarts. */
export class EntropyHealthError extends EntropyError {
  override name = 'EntropyHealthError'
  constructor(
    readonly failure: EntropyFailure,
    options: { when?: 'start-up' | 'continuous'; cause?: unknown } = {},
  ) {
    const when = options.when ?? 'continuous'
    super(
      failure.test === 'source'
        ? `the entropy source failed to deliver (${when} test): the device does not use it`
        : `the entropy source failed its ${when} ${failure.test.replace('_', ' ')} health test: ` +
            'the device does not use it',
      options.cause === undefined ? undefined : { cause: options.cause },
    )
  }
}

/**
 * SP 800-90B §4.3: no output is used before the start-up test passed. Without randomness nothing
 * the device would do is sound (journal file keys, session keys, token secrets), so it does not boot.
 */
export function startupTest(entropy: TestedEntropySource): void {
  const failure = entropy.startup()
  if (failure) throw new EntropyHealthError(failure, { when: 'start-up' })
}

/** What one read may ask for, as the HAL's sources take it. */
const MAX_READ = 65_536

/**
 * Every byte the device draws has passed the continuous health tests, and not just its own
 * prefix of them: the source is read a whole adaptive-proportion window at a time, tested, and
 * handed out from there, so that even a 16-byte read comes from a fully tested window. A failure
 * latches: that read and every later one throw EntropyHealthError until the next start-up test.
 */
export class HealthTestedEntropy implements TestedEntropySource {
  private readonly tests: ContinuousHealthTests
  private readonly window: number
  private readonly source: BreakableEntropy
  private failed: EntropyFailure | undefined
  private testedAt: number | undefined
  private buffer: Uint8Array = new Uint8Array(0)
  private offset = 0

  constructor(
    source: EntropySource,
    parameters: HealthTestParameters = DEVICE_HEALTH_TESTS,
    private readonly clock: Pick<Clock, 'now'> = { now: Date.now },
  ) {
    this.source = new BreakableEntropy(source)
    this.tests = new ContinuousHealthTests(parameters)
    this.window = parameters.window
  }

  get failure(): EntropyFailure | undefined {
    return this.failed
  }

  get lastTestedAt(): number | undefined {
    return this.testedAt
  }

  get raw(): RawEntropySource {
    return this.source
  }

  read(n: number): Uint8Array {
    if (!Number.isInteger(n) || n < 1 || n > MAX_READ)
      throw new RangeError(`entropy read size must be an integer from 1 to ${MAX_READ}, got ${n}`)
    if (this.failed) throw new EntropyHealthError(this.failed)
    // The draw's own array is its one allocation: each byte is copied out and wiped in one pass, with no
    // view of the window made per draw (a subarray cost as much as the rest of a 16-byte draw).
    const out = new Uint8Array(n)
    let { buffer, offset } = this
    for (let i = 0; i < n; i++) {
      if (offset === buffer.length) {
        this.refill(n - i)
        ;({ buffer, offset } = this)
      }
      out[i] = buffer[offset]!
      buffer[offset++] = 0
    }
    this.offset = offset
    return out
  }

  startup(): EntropyFailure | undefined {
    this.source.powerUp()
    this.failed = undefined
    this.tests.reset()
    this.buffer.fill(0)
    this.buffer = new Uint8Array(0)
    this.offset = 0
    try {
      this.tested(STARTUP_SAMPLES).fill(0)
    } catch (err) {
      if (!(err instanceof EntropyHealthError)) throw err
    }
    return this.failed
  }

  /**
   * Whole windows, enough for `wanted` bytes and no more: what is held stays under one window, so that a
   * sample of a few windows (the health monitor's, the self-test's) reaches fresh bytes of the source.
   */
  private refill(wanted: number): void {
    this.buffer = this.tested(Math.min(MAX_READ, Math.ceil(wanted / this.window) * this.window))
    this.offset = 0
  }

  private tested(n: number): Uint8Array {
    let bytes: Uint8Array
    try {
      bytes = this.source.read(n)
    } catch (err) {
      this.failed = { test: 'source' }
      throw new EntropyHealthError(this.failed, { cause: err })
    }
    const test = this.tests.push(bytes)
    this.testedAt = this.clock.now()
    if (test) {
      bytes.fill(0)
      this.failed = { test }
      throw new EntropyHealthError(this.failed)
    }
    return bytes
  }
}
