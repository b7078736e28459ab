import { setTimeout as sleep } from 'node:timers/promises'

export interface UntilOptions {
  /** How long to keep polling (default 60 s: it only decides when a test gives up, on a loaded host too). */
  ms?: number
  /**
   * A throwing check fails the wait at once instead of counting as "not yet": for waits on
   * something that must keep answering all along (a refused connection is then a failure).
   */
  rethrow?: boolean
}

/**
 * Polls `check` (sync or async) until it holds, first every 25 ms, then less often, up to every 250 ms
 * (a long wait does not keep the device busy answering); throws `${what}: not reached within
 * ${ms} ms` (the last error as its cause) when it does not in time. A check that throws counts as
 * "not yet" (a device rebooting refuses connections), unless `rethrow` is set.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: number | UntilOptions = {},
): Promise<void> {
  const { ms = 60_000, rethrow = false } = typeof options === 'number' ? { ms: options } : options
  const deadline = Date.now() + ms
  let lastError: unknown
  let pause = 25
  for (;;) {
    try {
      if (await check()) return
    } catch (err) {
      if (rethrow) throw err
      lastError = err
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached within ${ms} ms`, lastError === undefined ? {} : { cause: lastError })
    await sleep(pause)
    pause = Math.min(250, Math.round(pause * 1.25))
  }
}
