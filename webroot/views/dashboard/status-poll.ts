// The dashboard's live read: the public status every few seconds while the screen shows, the whole
// dashboard read again when the device restarted, its fail state changed or it answers again.
import { describeError } from '../../feedback.js'
import type { AppContext, DeviceStatus } from '../../view.js'
import { unixTimeWords } from '../time-words.js'

/** The public status, read this often while the screen shows. */
export const POLL_MS = 3000

/** The boot shown: its uptime, its fail state and when it started (device seconds, 0 when unknown). */
export interface ShownBoot {
  uptime: number
  fls: number
  bootAt: number
}

export interface StatusPollHooks {
  /** The boot shown now. */
  shown(): ShownBoot
  /** Reads and shows everything again. */
  reload(): Promise<void>
  /** Shows a status read at `readAt` (the browser's ms). */
  show(now: DeviceStatus, readAt: number): void
}

/** Starts polling; `live` tells how it goes. Returns what stops it. */
export function pollStatus(ctx: AppContext, live: HTMLElement, hooks: StatusPollHooks): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  let unanswered = false
  const poll = async () => {
    try {
      const readAt = Date.now()
      const now = await ctx.status()
      const time = typeof now.time === 'number' ? now.time : undefined
      const last = hooks.shown()
      // A new boot: its uptime restarted, or it started later than the boot shown.
      const later = time !== undefined && last.bootAt !== 0 && time - now.uptime > last.bootAt + 2
      const rebooted = now.uptime < last.uptime || later
      if (rebooted || unanswered || now.fls_state !== last.fls) await hooks.reload()
      else hooks.show(now, readAt)
      if (rebooted) live.textContent = `The device restarted: this is its new boot. ${live.textContent}`
      unanswered = false
    } catch (error) {
      unanswered = true
      const when = unixTimeWords(Math.floor(Date.now() / 1000))
      live.textContent = `No answer at ${when} (${describeError(error)}); trying again in ${POLL_MS / 1000} seconds.`
    }
    if (!stopped) timer = setTimeout(() => void poll(), POLL_MS)
  }
  timer = setTimeout(() => void poll(), POLL_MS)
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
