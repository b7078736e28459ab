// The shell's one watch of the device, for every screen: the public status every few seconds. It tells when the
// device stops answering (and since when), when it answers again, and when a new boot answers: every token died
// with the old one.
import { DeviceUnreachableError } from '../client/browser.js'
import { deviceRequest } from './device-session.js'
import type { DeviceStatus, StatusWatch, WatchEvent } from './view.js'

/** The status is read this often while the device answers. */
export const WATCH_MS = 3000
/** Silent, it is asked again after 3, 6, 12, then every 15 seconds: soon back, without hammering a dead link. */
const SILENT_MAX_MS = 15_000
/** A read that hangs this long counts as no answer. */
const ANSWER_WITHIN_MS = 10_000
/** While silent, listeners hear of it this often, so the ages they show stay true. */
const TICK_MS = 1000
/** The device's clock gives whole seconds. */
const CLOCK_SLACK_SECONDS = 2

interface Answer {
  status: DeviceStatus
  readAt: number
}

/**
 * Whether `now` comes from another boot than `before`: its uptime restarted, or, the device having been silent
 * since `silentSince`, it booted after that (by its clock, else by its uptime against the silence).
 */
function isNewBoot(before: Answer, now: Answer, silentSince: number | undefined): boolean {
  if (now.status.uptime < before.status.uptime) return true
  if (silentSince === undefined) return false
  const bootAt = (answer: Answer) =>
    typeof answer.status.time === 'number' ? answer.status.time - answer.status.uptime : undefined
  const [was, is] = [bootAt(before), bootAt(now)]
  if (was !== undefined && is !== undefined) return is > was + CLOCK_SLACK_SECONDS
  return now.status.uptime <= (now.readAt - silentSince) / 1000 + CLOCK_SLACK_SECONDS
}

export class DeviceWatch implements StatusWatch {
  readonly #listeners = new Set<(event: WatchEvent) => void>()
  /** The last answer's moment (the browser's ms), or when the watch began. */
  #answeredAt = Date.now()
  #last: Answer | undefined
  /** Answers to reads sent before this moment (the browser's ms) tell of no boot: see `rebase`. */
  #baseFrom = 0
  /** When the first unanswered read began, since the last answer. */
  #silentSince: number | undefined
  #misses = 0
  #reading: Promise<DeviceStatus> | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  #ticker: ReturnType<typeof setInterval> | undefined

  listen(listener: (event: WatchEvent) => void): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }

  /**
   * Forgets the boot seen so far: the next read sent from now on gives the one to compare with. A login does it, so
   * that only a boot after the login ends its session.
   */
  rebase(): void {
    this.#baseFrom = Date.now()
    this.#last = undefined
  }

  /** Reads the status now (joining a read under way), then on its own; rejects as the request does. */
  read(): Promise<DeviceStatus> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined
      this.#schedule()
    })
    return this.#reading
  }

  async #read(): Promise<DeviceStatus> {
    const readAt = Date.now()
    let status: DeviceStatus
    try {
      status = (await deviceRequest('/api/system/status', { timeoutMs: ANSWER_WITHIN_MS })) as DeviceStatus
    } catch (error) {
      if (error instanceof DeviceUnreachableError) this.#silent(readAt)
      throw error
    }
    const now = { status, readAt }
    const back = this.#silentSince !== undefined
    const current = readAt >= this.#baseFrom
    const newBoot = current && this.#last !== undefined && isNewBoot(this.#last, now, this.#silentSince)
    if (current) this.#last = now
    this.#answeredAt = readAt
    this.#silentSince = undefined
    this.#misses = 0
    clearInterval(this.#ticker)
    this.#ticker = undefined
    this.#tell({ kind: 'answer', status, readAt, back, newBoot })
    return status
  }

  #silent(readAt: number): void {
    this.#silentSince ??= readAt
    this.#misses++
    this.#ticker ??= setInterval(() => this.#tell(this.#silence()), TICK_MS)
    this.#tell(this.#silence())
  }

  #silence(): WatchEvent {
    return { kind: 'silent', since: this.#answeredAt }
  }

  #schedule(): void {
    clearTimeout(this.#timer)
    const wait = this.#misses === 0 ? WATCH_MS : Math.min(WATCH_MS * 2 ** (this.#misses - 1), SILENT_MAX_MS)
    this.#timer = setTimeout(() => void this.read().catch(() => undefined), wait)
  }

  #tell(event: WatchEvent): void {
    for (const listener of [...this.#listeners]) listener(event)
  }
}
