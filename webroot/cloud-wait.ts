// A wait on the family's cloud while a phone decides: the broker asked every few seconds, a countdown told every
// second, and the owner's Cancel honoured at once.

/** How a wait ended without an answer: the owner cancelled, or the deadline passed. */
export type Unanswered = 'cancelled' | 'expired'

/** How often the broker is asked: it answers at once, and a phone's answer is seen within this. */
const POLL_MS = 2000
const TICK_MS = 1000

export interface WaitOptions {
  /** Unix seconds (the browser's clock): the wait ends then. */
  until: number
  signal: AbortSignal
  /** Told the whole seconds left, at the start and every second. */
  tick(secondsLeft: number): void
}

/** Asks `check` until it answers, `until` passes or `signal` aborts. */
export async function waitOnCloud<T>(
  check: () => Promise<T | undefined>,
  { until, signal, tick }: WaitOptions,
): Promise<T | Unanswered> {
  let asked = 0
  for (;;) {
    if (signal.aborted) return 'cancelled'
    const now = Date.now()
    if (now - asked >= POLL_MS) {
      asked = now
      const answer = await check()
      if (answer !== undefined) return answer
      if (signal.aborted) return 'cancelled'
    }
    const left = until * 1000 - Date.now()
    if (left <= 0) return 'expired'
    tick(Math.ceil(left / 1000))
    await pause(Math.min(TICK_MS, left), signal)
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/** Seconds as a clock's "m:ss" ("4:05"). */
export function clockWords(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds))
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`
}
