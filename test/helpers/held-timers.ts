import type { Clock } from '../../hal/index.js'

interface HeldTimer {
  ms: number
  due: number
  /** Of two timers due at once, the one armed first fires first, as with Node's. */
  order: number
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
  #order = 0
  readonly #timers = new Set<HeldTimer>()
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
    const held: HeldTimer = { ms: Math.max(1, ms), due: 0, order: 0, repeat, fire }
    this.#arm(held)
    return { cancel: () => void this.#timers.delete(held) }
  }

  armed(): number[] {
    return this.#sorted().map((held) => held.ms)
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a held timer's time only moves on (${ms} ms)`)
    const end = this.#elapsed + ms
    for (let next = this.#sorted()[0]; next && next.due <= end; next = this.#sorted()[0]) {
      this.#moveTo(next.due)
      if (next.repeat) this.#arm(next)
      else this.#timers.delete(next)
      next.fire()
    }
    this.#moveTo(end)
  }

  #arm(held: HeldTimer): void {
    held.due = this.#elapsed + held.ms
    held.order = this.#order++
    this.#timers.add(held)
  }

  #moveTo(elapsed: number): void {
    this.#move(elapsed - this.#elapsed)
    this.#elapsed = elapsed
  }

  #sorted(): HeldTimer[] {
    return [...this.#timers].sort((a, b) => a.due - b.due || a.order - b.order)
  }
}
