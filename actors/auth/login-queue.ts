import type { Clock } from '../../hal/index.js'
import { type CommandReply, deadlinePassed, fail, TIMEOUT_ERROR } from '../../protocol/index.js'
import { LoginBrake } from './brake.js'

export interface LoginQueueOptions {
  /** The brake's clock: each answer is timed on `monotonic`, and held back by `sleep`. */
  clock: Pick<Clock, 'monotonic' | 'sleep'>
  brake?: LoginBrake
  /** The host clock that command deadlines are read on (ms since the epoch); tests inject one. */
  now?: () => number
  /** Attempts one client may have waiting or running; default 8. */
  perSource?: number
  /** Attempts waiting, all clients together; default 32. */
  total?: number
}

interface Waiting {
  deadline: unknown
  attempt: () => Promise<CommandReply>
  settle(reply: Promise<CommandReply>): void
}

/** The 429 of an attempt that does not fit: answered at once, its eJWT never read. */
export const QUEUE_FULL = 429

/**
 * The login attempts of POST /api/auth/token: one at a time behind the brake, since parallel
 * guesses would all start before the failures that should slow them are counted; and shared out
 * so that strangers cannot lock the owner out.
 * - Bounded: a client (see clientSource) has at most `perSource` attempts waiting or running, all
 *   clients together at most `total` waiting. What does not fit is refused at once (429, with the
 *   seconds to wait) and never examined, so the refusal tells nothing of the eJWT. When the queue
 *   is full, a client with fewer waiting than the busiest client takes that client's newest place.
 * - Fair: the client served least recently goes next, so an attempt waits for at most one turn of
 *   each other client with attempts waiting, however many those have queued.
 * - An attempt whose deadline passed while it waited is dropped unread (504): its client had its
 *   answer from the gateway already, and working it through would only delay the others.
 */
export class LoginQueue {
  readonly brake: LoginBrake
  readonly #clock: Pick<Clock, 'monotonic' | 'sleep'>
  readonly #now: () => number
  readonly #perSource: number
  readonly #total: number
  // Each client's waiting attempts; Map order is the order clients are served in (least recently first).
  readonly #waiting = new Map<string, Waiting[]>()
  #size = 0
  // The client whose attempt runs, and its attempts waiting meanwhile (out of #waiting until its turn ends).
  #running: { source: string; rest: Waiting[] } | undefined
  #closed = false

  constructor(options: LoginQueueOptions) {
    this.#clock = options.clock
    this.brake = options.brake ?? new LoginBrake()
    this.#now = options.now ?? Date.now
    this.#perSource = options.perSource ?? 8
    this.#total = options.total ?? 32
  }

  /** Attempts waiting (the running one excluded). */
  get waiting(): number {
    return this.#size
  }

  /**
   * Answers every waiting attempt, and any that comes, 503 `stopping` unread: a stopping service
   * answers them now rather than when their deadlines pass. The running one finishes.
   */
  close(): void {
    this.#closed = true
    for (const queued of [...this.#waiting.values(), this.#running?.rest ?? []])
      for (const waiting of queued.splice(0)) waiting.settle(Promise.resolve(stopping()))
    this.#waiting.clear()
    this.#size = 0
  }

  /** Runs `attempt` for `source` in its turn, answered no sooner than the brake says; or refuses it. */
  run(source: string, deadline: unknown, attempt: () => Promise<CommandReply>): Promise<CommandReply> {
    if (this.#closed) return Promise.resolve(stopping())
    const own = this.#pending(source)
    if (own >= this.#perSource || (this.#size >= this.#total && !this.#yieldPlace(own))) return this.#refusal(own)
    return new Promise((resolve) => {
      const queued = this.#running?.source === source ? this.#running.rest : this.#queueOf(source)
      queued.push({ deadline, attempt, settle: resolve })
      this.#size += 1
      if (!this.#running) void this.#next()
    })
  }

  #queueOf(source: string): Waiting[] {
    let queued = this.#waiting.get(source)
    if (!queued) this.#waiting.set(source, (queued = []))
    return queued
  }

  #pending(source: string): number {
    if (this.#running?.source === source) return this.#running.rest.length + 1
    return this.#waiting.get(source)?.length ?? 0
  }

  /** Refuses the newest waiting attempt of the busiest client if it has two more than `own`; true if it did. */
  #yieldPlace(own: number): boolean {
    let busiest: Waiting[] = []
    for (const queued of this.#waiting.values()) if (queued.length > busiest.length) busiest = queued
    if (this.#running && this.#running.rest.length > busiest.length) busiest = this.#running.rest
    if (busiest.length < own + 2) return false
    const evicted = busiest.pop()!
    this.#size -= 1
    evicted.settle(this.#refusal(busiest.length))
    return true
  }

  /** 429 with the seconds until the client's attempts ahead are through, at the brake's current pace. */
  #refusal(pending: number): Promise<CommandReply> {
    const retryAfter = Math.max(1, Math.ceil((pending * this.brake.minimumDuration()) / 1000))
    return Promise.resolve({
      ...fail(QUEUE_FULL, 'too_many_requests', 'Too many login attempts are waiting; try again later'),
      retryAfter,
    })
  }

  async #next(): Promise<void> {
    const [source, queued] = this.#waiting.entries().next().value ?? []
    if (source === undefined || !queued) return
    this.#waiting.delete(source)
    const turn = queued.shift()!
    this.#size -= 1
    this.#running = { source, rest: queued }
    if (deadlinePassed(turn.deadline, this.#now())) {
      turn.settle(
        Promise.resolve(fail(504, TIMEOUT_ERROR.error, 'The login was not examined: its deadline had passed')),
      )
    } else {
      const reply = this.#braked(turn.attempt)
      turn.settle(reply)
      await reply.catch(() => undefined)
    }
    const { rest } = this.#running
    this.#running = undefined
    // Behind every client that waited meanwhile.
    if (rest.length > 0) this.#waiting.set(source, rest)
    void this.#next()
  }

  async #braked(attempt: () => Promise<CommandReply>): Promise<CommandReply> {
    const started = this.#clock.monotonic()
    const minimum = this.brake.minimumDuration()
    let ok = false
    try {
      const reply = await attempt()
      ok = reply.status === 200
      return reply
    } finally {
      // An attempt that throws (the journal unavailable, say) is answered no sooner, and counts as a failure.
      this.brake.record(ok)
      // A timer may fire a little early (Node counts from libuv's cached loop time), so the time
      // left is measured again after it; a clock that does not move (a test's) gets one sleep.
      // One extra millisecond covers monotonic clocks that truncate to whole milliseconds.
      const elapsed = () => this.#clock.monotonic() - started
      for (let remaining = minimum + 1 - elapsed(); remaining > 0; remaining = minimum + 1 - elapsed()) {
        const before = this.#clock.monotonic()
        await this.#clock.sleep(Math.ceil(remaining))
        if (this.#clock.monotonic() === before) break
      }
    }
  }
}

function stopping(): CommandReply {
  return fail(503, 'stopping', 'The device is restarting or stopping; try again')
}
