import type { LoginBrakeOptions } from './brake.js'

/**
 * The device's pace of passphrase checks, all clients together: checks at least `baseMs` apart,
 * and no more than `threshold` + t / `slowMs` of them in any t ms (a bucket of `threshold`
 * checks, refilled one per `slowMs`). With the brake's numbers, a check at 0, 0.5, 1, 1.5, 3,
 * 4.5 s…: the times at which one client guessing alone got its attempts through when the device
 * examined one at a time. So any number of addresses guessing together get what one had: 2 checks
 * a second at most, 0.67 sustained. Every check takes its place, whatever its outcome: a success
 * elsewhere neither speeds nor slows anyone's next check, so the pace tells nobody how another's went.
 */
export class GuessPace {
  readonly #spacingMs: number
  readonly #refillMs: number
  readonly #capacityMs: number
  // The bucket in ms of refill: a check costs #refillMs of it.
  #credit: number
  #creditAt = -Infinity
  #lastStart = -Infinity

  constructor(options: LoginBrakeOptions = {}) {
    this.#spacingMs = options.baseMs ?? 500
    this.#refillMs = options.slowMs ?? 1500
    this.#capacityMs = (options.threshold ?? 3) * this.#refillMs
    this.#credit = this.#capacityMs
  }

  /** Milliseconds per check once the bucket is spent. */
  get sustainedMs(): number {
    return this.#refillMs
  }

  /** Milliseconds from `now` (the brake's monotonic clock) until the next check may start; 0 for now. */
  wait(now: number): number {
    const short = this.#refillMs - this.#creditNow(now)
    return Math.max(0, short, this.#lastStart + this.#spacingMs - now)
  }

  /** A check starts at `now`: it takes its place. */
  take(now: number): void {
    this.#credit = this.#creditNow(now) - this.#refillMs
    this.#creditAt = now
    this.#lastStart = now
  }

  #creditNow(now: number): number {
    return Math.min(this.#capacityMs, this.#credit + Math.max(0, now - this.#creditAt))
  }
}
