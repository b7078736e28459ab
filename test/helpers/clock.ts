import type { Clock } from '../../hal/index.js'
import { hostClock } from '../../hal/sim/host-clock.js'
import { HeldTimers } from './held-timers.js'

/** A test's clock: its time moves on when the test says, without waiting for the wall clock. */
export interface TestClock extends Clock {
  advance(ms: number): void
}

/** A test's clock whose timers fire only when the test moves it on. */
export interface ManualClock extends TestClock {
  /** The delays of the timers armed and neither fired nor cancelled, the soonest due first. */
  armed(): number[]
}

/**
 * The host's clock, except that the device's deliberate delays (the login brake's, through `sleep`)
 * pass at once: its monotonic time jumps by them instead, so the device still sees every answer
 * take as long as the brake says. Wall time is the host's, moved on by `advance` (a token's expiry
 * without waiting for it). Its timers are the host's: the device's deadlines and periodic tasks run
 * in real time, as on a device (`manualClock` fires them at the test's word). The default of
 * `bootDevice`; only the tests of the delays themselves run on `hostClock`.
 */
export function skippingClock(): TestClock {
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
    timer: hostClock.timer,
    advance(ms) {
      advanced += ms
    },
  }
}

/**
 * The skipping clock, but for its timers: they fire only as `advance` moves its wall and monotonic
 * time on, each at its own time (a test waits for no deadline, and a deadline cannot pass while a
 * loaded machine is slow). So a test can tell which deadline the device armed (`armed`) and fire it
 * exactly when it falls due.
 */
export function manualClock(): ManualClock {
  const skipping = skippingClock()
  const timers = new HeldTimers(skipping.advance)
  return {
    ...skipping,
    monotonic: () => skipping.monotonic() + timers.elapsed,
    timer: timers.timer,
    armed: () => timers.armed(),
    advance: (ms) => timers.advance(ms),
  }
}

/** A clock of simulated time alone: nothing of the host's time shows in it, and `run` moves it on. */
export interface SimulatedClock extends Clock {
  /**
   * Moves time on by `ms`, from one armed timer (or sleep) to the next in the order they fall due,
   * letting what each one woke settle before the next fires: a whole exchange of many parties,
   * deterministic, in as many ms of the host as its work takes.
   */
  run(ms: number): Promise<void>
}

/** A simulated clock whose wall time starts at `epoch` and monotonic time at 0. */
export function simulatedClock(epoch = Date.UTC(2026, 0, 1)): SimulatedClock {
  let elapsed = 0
  const timers = new HeldTimers((ms) => (elapsed += ms))
  const settled = () => new Promise<void>((resolve) => setImmediate(resolve))
  return {
    now: () => epoch + elapsed,
    monotonic: () => elapsed,
    isSet: () => true,
    sleep: (ms) => new Promise<void>((resolve) => void timers.timer(ms, resolve)),
    timer: timers.timer,
    async run(ms) {
      const end = elapsed + ms
      await settled()
      for (let next = timers.untilNext(); next !== undefined && elapsed + next <= end; next = timers.untilNext()) {
        timers.advance(next)
        await settled()
      }
      timers.advance(end - elapsed)
      await settled()
    },
  }
}
