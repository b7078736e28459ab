// The dashboard's live read, through the shell's watch (no poll of its own): each answer shown, the whole
// dashboard read again when the device answers again or its fail state changed, and the values marked stale,
// with their age, while it is silent. A new boot is the shell's: it ends the session.
import { describeError } from '../../feedback.js'
import type { AppContext, DeviceStatus } from '../../view.js'
import { ageWords, unixTimeWords } from '../time-words.js'

export { WATCH_MS as POLL_MS } from '../../device-watch.js'

export interface FollowStatusHooks {
  /** The fail state shown now. */
  shownFls(): number
  /** Reads and shows everything again. */
  reload(): Promise<void>
  /** Shows a status read at `readAt` (the browser's ms). */
  show(now: DeviceStatus, readAt: number): void
  /** The device has been silent since `since` (the browser's ms): what shows is that old. */
  stale(since: number): void
}

/** Follows the watch; `live` tells how it goes. Returns what stops it. */
export function followStatus(ctx: AppContext, live: HTMLElement, hooks: FollowStatusHooks): () => void {
  let reloading = false
  return ctx.watch.listen((event) => {
    if (event.kind === 'silent') {
      const since = unixTimeWords(Math.floor(event.since / 1000))
      live.textContent = `No answer since ${since}: the values above are as of ${ageWords(event.since)}. Retrying…`
      hooks.stale(event.since)
      return
    }
    if (event.newBoot || reloading) return
    if (!event.back && event.status.fls_state === hooks.shownFls()) return hooks.show(event.status, event.readAt)
    reloading = true
    hooks
      .reload()
      .catch((error: unknown) => void (live.textContent = `Not read again: ${describeError(error)}`))
      .finally(() => (reloading = false))
  })
}
