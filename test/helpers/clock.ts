import type { Clock } from '../../hal/index.js'
import { hostClock } from '../../hal/sim/host-clock.js'

/**
 * The host's clock, except that the device's deliberate delays (the login brake's, through `sleep`)
 * pass at once: its monotonic time jumps by them instead, so the device still sees every answer
 * take as long as the brake says. Wall time is the host's, moved on by `advance` (a token's expiry
 * without waiting for it). The default of `bootDevice`; only the tests of the delays themselves run
 * on `hostClock`.
 */
export function skippingClock(): Clock & { advance(ms: number): void } {
  let skipped = 0
  let advanced = 0
  return {
    now: () => hostClock.now() + advanced,
    monotonic: () => hostClock.monotonic() + skipped,
    isSet: () => true,
    sleep(ms) {
      skipped += Math.max(0, ms)
      return new Promise((resolve) => setImmediate(resolve))
    },
    advance(ms) {
      advanced += ms
    },
  }
}
