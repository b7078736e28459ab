import { setTimeout } from 'node:timers/promises'
import type { Clock } from '../types.js'

export const hostClock: Clock = {
  now: () => Date.now(),
  // hrtime is CLOCK_MONOTONIC, which every process on the machine shares, unlike performance.now().
  monotonic: () => Number(process.hrtime.bigint() / 1_000_000n),
  isSet: () => true,
  sleep: (ms) => setTimeout(ms),
}
