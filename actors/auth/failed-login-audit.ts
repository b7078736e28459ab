import type { Logger } from 'pino'
import type { Clock, Timer } from '../../hal/index.js'
import { type JournalEntry, LogResult, LogType, type LogTypeNumber } from '../../protocol/index.js'
import { processMetrics } from '../../metrics/index.js'

/** A refused login as the journal records it: the status it was answered, the scope it asked for, its request. */
export interface RefusedLogin {
  status: number
  rid: string
  /** The `scope` claim as sent, when the eJWT could be read that far. */
  scope?: string
}

export interface FailedLoginAuditOptions {
  journal(entries: JournalEntry[]): Promise<void>
  logger: Logger
  /** The device's: the windows run on it. */
  clock: Pick<Clock, 'timer'>
  /** How long refusals of one status are counted into one record; default 10 s. */
  windowMs?: number
  /** The record: AUTH_SUCCESS_INTERNAL (a passphrase login) by default, AUTH_SUCCESS_EXTERNAL for ext/token. */
  type?: LogTypeNumber
}

/** A journaled scope is cut to this: an attempt's scope is the stranger's own text. */
export const JOURNALED_SCOPE_LENGTH = 64

interface Window {
  count: number
  first: RefusedLogin | undefined
  timer: Timer
}

/**
 * Journals refused logins (AUTH_SUCCESS_INTERNAL, result FAILED, `source` the status) without
 * letting a flood fill the journal: a refusal of a status with no window open is journaled at
 * once and opens a window; the refusals of that status during the window are counted and
 * journaled as one record when it ends (`count`, and the first one's `scope` and `rid`), which
 * opens the next window; a window that counted nothing closes. So each status costs at most one
 * record per window however fast strangers try, and the owner's own mistake is on record at once.
 * Never the eJWT or anything of the key.
 */
export class FailedLoginAudit {
  readonly #windows = new Map<number, Window>()
  readonly #journal: (entries: JournalEntry[]) => Promise<void>
  readonly #logger: Logger
  readonly #clock: Pick<Clock, 'timer'>
  readonly #windowMs: number
  readonly #type: LogTypeNumber
  /** hem_login_failures_total of this kind of login. */
  readonly #failures

  constructor(options: FailedLoginAuditOptions) {
    this.#journal = options.journal
    this.#logger = options.logger
    this.#clock = options.clock
    this.#windowMs = options.windowMs ?? 10_000
    this.#type = options.type ?? LogType.AUTH_SUCCESS_INTERNAL
    const kind = this.#type === LogType.AUTH_SUCCESS_EXTERNAL ? 'external' : 'passphrase'
    this.#failures = processMetrics()?.loginFailures.labels(kind)
  }

  /** Resolves once the refusal is journaled or counted; never rejects (the refusal stands either way). */
  async refused(login: RefusedLogin): Promise<void> {
    this.#failures?.inc()
    const window = this.#windows.get(login.status)
    if (window) {
      window.count += 1
      window.first ??= login
      return
    }
    this.#open(login.status)
    await this.#write(login, 1)
  }

  /** Journals what the open windows counted and closes them: at stop. */
  async flush(): Promise<void> {
    const open = [...this.#windows.values()]
    this.#windows.clear()
    for (const { timer } of open) timer.cancel()
    await Promise.all(open.map(({ first, count }) => (first ? this.#write(first, count) : undefined)))
  }

  #open(status: number): void {
    // Unref'd: an open window must not keep a stopping process up (flush writes it).
    const timer = this.#clock.timer(this.#windowMs, () => this.#close(status), { unref: true })
    this.#windows.set(status, { count: 0, first: undefined, timer })
  }

  #close(status: number): void {
    const window = this.#windows.get(status)
    this.#windows.delete(status)
    if (!window?.first) return
    this.#open(status)
    void this.#write(window.first, window.count)
  }

  async #write({ status, rid, scope }: RefusedLogin, count: number): Promise<void> {
    const entry: JournalEntry = {
      type: this.#type,
      result: LogResult.FAILED,
      data: {
        source: status,
        ...(scope !== undefined ? { scope: scope.slice(0, JOURNALED_SCOPE_LENGTH) } : {}),
        rid,
        count,
      },
    }
    try {
      await this.#journal([entry])
    } catch (err) {
      this.#logger.warn({ err: (err as Error).message, status, count }, 'a refused login could not be journaled')
    }
  }
}
