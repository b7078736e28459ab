import type { Test } from 'tap'

export interface CapturedTimers {
  /** The delay of every setTimeout of the process since the capture began, in order. */
  delays: (number | undefined)[]
  /** The callbacks of the timers with the held delay, for the test to fire (each at most once). */
  held: (() => void)[]
}

/**
 * Watches globalThis.setTimeout until the test ends, so that a test can tell which deadline code
 * armed instead of timing it on a loaded machine. Timers run as usual, except those whose delay
 * is `hold`: they never fire by themselves (pick a delay nothing else uses), the test fires them.
 */
export function captureTimers(t: Test, hold?: number): CapturedTimers {
  const captured: CapturedTimers = { delays: [], held: [] }
  const realSetTimeout = globalThis.setTimeout
  globalThis.setTimeout = ((callback: () => void, ms?: number, ...args: unknown[]) => {
    captured.delays.push(ms)
    if (hold === undefined || ms !== hold)
      return Reflect.apply(realSetTimeout, globalThis, [callback, ms, ...args]) as NodeJS.Timeout
    captured.held.push(callback)
    // A handle that clearTimeout accepts, and that keeps the process up while the timer is armed.
    return realSetTimeout(() => undefined, 2 ** 31 - 1)
  }) as typeof setTimeout
  t.teardown(() => void (globalThis.setTimeout = realSetTimeout))
  return captured
}
