// The idle logout: a session without input (keyboard, pointer) for the period the owner chose ends, with a
// warning a minute before. Timers of the page's own clock only, so that a test can move that clock on.
import { idleMinutes } from './app-preferences.js'

const WARN_BEFORE_MS = 60_000
/** What counts as use. Heard as they bubble: a changed period is kept by its control before this reads it. */
const INPUT_EVENTS = ['keydown', 'pointerdown', 'pointermove', 'wheel', 'input', 'change'] as const

export interface IdleHooks {
  /** A minute is left: say so, with a way to stay. */
  warn(): void
  /** Input came after the warning: take it away. */
  unwarn(): void
  /** The period passed without input: end the session, saying after how long. */
  end(minutes: number): void
}

export class IdleLogout {
  #lastInput = 0
  #warned = false
  #timer: ReturnType<typeof setTimeout> | undefined
  readonly #onInput = (event: Event) => {
    this.#lastInput = Date.now()
    // A pointer on its way to "Stay logged in" keeps the session, and leaves the warning under it until it acts.
    if (event.type !== 'pointermove') this.#unwarn()
    // The timer waits for a moment computed from an older input, and finds it moved on; a new period may be sooner.
    if (event.type === 'change') this.#check()
  }

  constructor(private readonly hooks: IdleHooks) {}

  start(): void {
    for (const type of INPUT_EVENTS) addEventListener(type, this.#onInput, { passive: true })
    this.#lastInput = Date.now()
    this.#check()
  }

  stop(): void {
    for (const type of INPUT_EVENTS) removeEventListener(type, this.#onInput)
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#unwarn()
  }

  #unwarn(): void {
    if (!this.#warned) return
    this.#warned = false
    this.hooks.unwarn()
  }

  /** Acts on the time now, then waits for the next moment that matters (the period is read each time). */
  #check(): void {
    clearTimeout(this.#timer)
    const minutes = idleMinutes()
    const endAt = this.#lastInput + minutes * 60_000
    const warnAt = endAt - WARN_BEFORE_MS
    const now = Date.now()
    if (now >= endAt) {
      this.stop()
      this.hooks.end(minutes)
      return
    }
    if (now < warnAt) this.#unwarn()
    else if (!this.#warned) {
      this.#warned = true
      this.hooks.warn()
    }
    this.#timer = setTimeout(() => this.#check(), (now < warnAt ? warnAt : endAt) - now)
  }
}
