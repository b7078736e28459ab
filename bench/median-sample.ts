import type { Sample } from './types.js'

/**
 * One sample for several rounds of a scenario: the median of each rate and latency (robust to
 * one round disturbed by the machine's noise), and the sums of the counts.
 */
export function medianSample(rounds: Sample[]): Sample {
  const sum = (pick: (s: Sample) => number) => rounds.reduce((total, s) => total + pick(s), 0)
  const cpu = rounds.map((s) => s.cpuMicrosPerAnswer)
  return {
    requestsPerSecond: median(rounds.map((s) => s.requestsPerSecond)),
    p50: median(rounds.map((s) => s.p50)),
    p99: median(rounds.map((s) => s.p99)),
    ok: sum((s) => s.ok),
    errors: sum((s) => s.errors),
    non2xx: sum((s) => s.non2xx),
    ...(cpu.length > 0 && cpu.every((c) => c !== undefined) ? { cpuMicrosPerAnswer: median(cpu as number[]) } : {}),
  }
}

/** The median of some values (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
