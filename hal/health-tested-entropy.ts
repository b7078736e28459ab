import { EntropyError } from './errors.js'
import { ContinuousHealthTests, DEVICE_HEALTH_TESTS, type HealthTestParameters } from './sp800-90b.js'
import type { EntropyFailure, EntropySource, TestedEntropySource } from './types.js'

/** SP 800-90B §4.3: the start-up tests run over at least 1024 consecutive samples. */
const STARTUP_SAMPLES = 1024

/** The entropy source failed a health test: it delivers nothing more until the device restarts. */
export class EntropyHealthError extends EntropyError {
  override name = 'EntropyHealthError'
  constructor(
    readonly failure: EntropyFailure,
    when: 'start-up' | 'continuous' = 'continuous',
  ) {
    super(
      failure.test === 'source'
        ? `the entropy source failed to deliver (${when} test): the device does not use it`
        : `the entropy source failed its ${when} ${failure.test.replace('_', ' ')} health test: the device does not use it`,
    )
  }
}

/**
 * SP 800-90B §4.3: no output is used before the start-up test passed. Without randomness nothing
 * the device would do is sound (journal file keys, session keys, token secrets), so it does not boot.
 */
export function startupTest(entropy: TestedEntropySource): void {
  const failure = entropy.startup()
  if (failure) throw new EntropyHealthError(failure, 'start-up')
}

/**
 * Every byte the device draws passes the continuous health tests before anyone sees it. A
 * failure latches: the read that found it and every later one throw EntropyHealthError, so
 * nothing is ever built on output a test rejected.
 */
export class HealthTestedEntropy implements TestedEntropySource {
  private readonly tests: ContinuousHealthTests
  private failed: EntropyFailure | undefined

  constructor(
    private readonly source: EntropySource,
    parameters: HealthTestParameters = DEVICE_HEALTH_TESTS,
  ) {
    this.tests = new ContinuousHealthTests(parameters)
  }

  get failure(): EntropyFailure | undefined {
    return this.failed
  }

  read(n: number): Uint8Array {
    if (this.failed) throw new EntropyHealthError(this.failed)
    let bytes: Uint8Array
    try {
      bytes = this.source.read(n)
    } catch (err) {
      if (err instanceof RangeError) throw err
      this.failed = { test: 'source' }
      throw new EntropyHealthError(this.failed)
    }
    const test = this.tests.push(bytes)
    if (test) {
      bytes.fill(0)
      this.failed = { test }
      throw new EntropyHealthError(this.failed)
    }
    return bytes
  }

  startup(): EntropyFailure | undefined {
    this.failed = undefined
    this.tests.reset()
    try {
      this.read(STARTUP_SAMPLES).fill(0)
    } catch (err) {
      if (!(err instanceof EntropyHealthError)) throw err
    }
    return this.failed
  }
}
