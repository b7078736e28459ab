import type { Test } from 'tap'

export interface HeldInterval {
  /** Runs the interval's callback once, as its timer would. */
  fire(): void
  /** Whether the code cleared it. */
  cleared: boolean
}

/**
 * Holds every setInterval of the process with delay `hold` (pick one nothing else uses) until the test
 * ends: it never fires by itself, the test fires it, so a periodic task is driven without a wall clock.
 * The others run as usual.
 */
export function holdIntervals(t: Test, hold: number): HeldInterval[] {
  const held: HeldInterval[] = []
  const realSetInterval = globalThis.setInterval
  const realClearInterval = globalThis.clearInterval
  const handles = new Map<unknown, HeldInterval>()
  globalThis.setInterval = ((callback: () => void, ms?: number, ...args: unknown[]) => {
    if (ms !== hold) return Reflect.apply(realSetInterval, globalThis, [callback, ms, ...args]) as NodeJS.Timeout
    // A handle that clearInterval and unref accept and that never fires.
    const handle = realSetInterval(() => undefined, 2 ** 31 - 1)
    const interval: HeldInterval = { fire: () => callback(), cleared: false }
    handles.set(handle, interval)
    held.push(interval)
    return handle
  }) as typeof setInterval
  globalThis.clearInterval = ((handle?: NodeJS.Timeout | string | number) => {
    const interval = handles.get(handle)
    if (interval) interval.cleared = true
    realClearInterval(handle)
  }) as typeof clearInterval
  t.teardown(() => {
    globalThis.setInterval = realSetInterval
    globalThis.clearInterval = realClearInterval
    for (const handle of handles.keys()) realClearInterval(handle as NodeJS.Timeout)
  })
  return held
}
