import { setTimeout as sleep } from 'node:timers/promises'
import type { Clock } from '../types.js'

export const hostClock: Clock = {
  now: () => Date.now(),
  // hrtime is CLOCK_MONOTONIC, which every process on the machine shares, unlike performance.now().
  monotonic: () => Number(process.hrtime.bigint() / 1_000_000n),
  isSet: () => true,
  sleep: (ms) => sleep(ms),
  timer(ms, fire, { repeat = false, unref = false } = {}) {
    const handle = repeat ? setInterval(fire, ms) : setTimeout(fire, ms)
    if (unref) handle.unref()
    // Node's clearTimeout clears an interval too.
    return { cancel: () => clearTimeout(handle) }
  },
}
