// NIST SP 800-90B §4.4: the continuous health tests of a noise source, on 8-bit samples.

/** What the tests assume of the source, and how rarely a sound source may fail them. */
export interface HealthTestParameters {
  /** Assessed min-entropy per 8-bit sample, in bits (0 < H ≤ 8). */
  minEntropy: number
  /** The false-positive probability α of each test is 2^-alphaExponent (20 ≤ … ≤ 40 in §4.4). */
  alphaExponent: number
  /** Adaptive proportion test window W (512 for non-binary samples, §4.4.2). */
  window: number
}

/**
 * The host's source is a CSPRNG, not a raw noise source, so no assessment bounds its
 * entropy: a conservative 1 bit per byte keeps the tests catching a stuck or heavily
 * biased source while a sound one fails them with probability 2^-40 per window.
 */
export const DEVICE_HEALTH_TESTS: HealthTestParameters = { minEntropy: 1, alphaExponent: 40, window: 512 }

/** §4.4.1: C = 1 + ⌈-log2(α) / H⌉ equal samples in a row fail the repetition count test. */
export function repetitionCountCutoff(p: HealthTestParameters): number {
  checkParameters(p)
  return 1 + Math.ceil(p.alphaExponent / p.minEntropy)
}

/**
 * §4.4.2: C = 1 + CRITBINOM(W, 2^-H, 1 - α): the smallest count of the window's first value
 * that a source with min-entropy H reaches with probability at most α.
 */
export function adaptiveProportionCutoff(p: HealthTestParameters): number {
  checkParameters(p)
  const probability = 2 ** -p.minEntropy
  const alpha = 2 ** -p.alphaExponent
  const logPmf = (k: number) =>
    logChoose(p.window, k) + k * Math.log(probability) + (p.window - k) * Math.log1p(-probability)
  // The upper tail, summed from the top, stays accurate where 1 - CDF would cancel to zero.
  let tail = 0
  for (let k = p.window; k >= 0; k--) {
    tail += Math.exp(logPmf(k))
    if (tail > alpha) return Math.min(k + 1, p.window)
  }
  return p.window
}

export type HealthTestName = 'repetition_count' | 'adaptive_proportion'

/** Feeds samples through both tests; `push` answers the test that failed, or undefined. */
export class ContinuousHealthTests {
  readonly rctCutoff: number
  readonly aptCutoff: number
  private last = -1
  private run = 0
  private windowFirst = -1
  private windowSeen = 0
  private windowCount = 0

  constructor(private readonly parameters: HealthTestParameters = DEVICE_HEALTH_TESTS) {
    this.rctCutoff = repetitionCountCutoff(parameters)
    this.aptCutoff = adaptiveProportionCutoff(parameters)
  }

  push(samples: Uint8Array): HealthTestName | undefined {
    for (const sample of samples) {
      this.run = sample === this.last ? this.run + 1 : 1
      this.last = sample
      if (this.run >= this.rctCutoff) return 'repetition_count'
      if (this.windowSeen === 0) {
        this.windowFirst = sample
        this.windowCount = 1
      } else if (sample === this.windowFirst && ++this.windowCount >= this.aptCutoff) {
        return 'adaptive_proportion'
      }
      this.windowSeen = (this.windowSeen + 1) % this.parameters.window
    }
    return undefined
  }

  reset(): void {
    this.last = -1
    this.run = 0
    this.windowSeen = 0
  }
}

function logChoose(n: number, k: number): number {
  let sum = 0
  for (let i = 1; i <= k; i++) sum += Math.log((n - k + i) / i)
  return sum
}

function checkParameters(p: HealthTestParameters): void {
  if (!(p.minEntropy > 0 && p.minEntropy <= 8))
    throw new RangeError(`min-entropy must be in (0, 8] bits per sample, got ${p.minEntropy}`)
  if (!(Number.isInteger(p.alphaExponent) && p.alphaExponent >= 20 && p.alphaExponent <= 40)) {
    throw new RangeError(`the α exponent must be an integer from 20 to 40, got ${p.alphaExponent}`)
  }
  if (!(Number.isInteger(p.window) && p.window >= 2))
    throw new RangeError(`the window must be an integer of at least 2, got ${p.window}`)
}
