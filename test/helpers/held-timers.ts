import type { Clock } from '../../hal/index.js'

interface HeldTimer {
  ms: number
  due: number
  repeat: boolean
  fire: () => void
}

/**
 * A test clock's timers that fire only when `advance` moves its time on: in the order they fall due, each
 * once the clock's time (`move`) stands at its due time, those armed by one that fired included. None keeps
 * the process up.
 */
export class HeldTimers {
  #elapsed = 0
  // Sorted: the soonest due first; of two due at once, the one armed first, as with Node's.
  readonly #timers: HeldTimer[] = []
  readonly #move: (ms: number) => void

  /** `move(ms)` moves the clock's own time on by `ms`. */
  constructor(move: (ms: number) => void) {
    this.#move = move
  }

  /** How far `advance` has moved time, in ms. */
  get elapsed(): number {
    return this.#elapsed
  }

  readonly timer: Clock['timer'] = (ms, fire, { repeat = false } = {}) => {
    // At least 1 ms, as Node's: a repeating timer must not fire forever within one advance.
    const held: HeldTimer = { ms: Math.max(1, ms), due: 0, repeat, fire }
    this.#arm(held)
    return { cancel: () => this.#disarm(held) }
  }

  armed(): number[] {
    return this.#timers.map((held) => held.ms)
  }

  /** Milliseconds until the soonest armed timer is due; undefined when none is armed. */
  untilNext(): number | undefined {
    const next = this.#timers[0]
    return next && next.due - this.#elapsed
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a held timer's time only moves on (${ms} ms)`)
    const end = this.#elapsed + ms
    for (let next = this.#timers[0]; next && next.due <= end; next = this.#timers[0]) {
      this.#timers.shift()
      this.#moveTo(next.due)
      if (next.repeat) this.#arm(next)
      next.fire()
    }
    this.#moveTo(end)
  }

  #arm(held: HeldTimer): void {
    held.due = this.#elapsed + held.ms
    // Armed last: after every timer due no later than it.
    let low = 0
    let high = this.#timers.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.#timers[middle]!.due <= held.due) low = middle + 1
      else high = middle
    }
    this.#timers.splice(low, 0, held)
  }

  #disarm(held: HeldTimer): void {
    const at = this.#timers.indexOf(held)
    if (at >= 0) this.#timers.splice(at, 1)
  }

  #moveTo(elapsed: number): void {
    this.#move(elapsed - this.#elapsed)
    this.#elapsed = elapsed
  }
}
