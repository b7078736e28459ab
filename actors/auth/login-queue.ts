import type { Clock } from '../../hal/index.js'
import { type CommandReply, deadlinePassed, fail, TIMEOUT_ERROR } from '../../protocol/index.js'
import { type BrakeRules, brakeRules, type LoginBrakeOptions } from './brake.js'
import { freshPace, type Pace, paceTake, paceWait, retryAfterSeconds } from './guess-pace.js'
import { arrival, fitsSource, nextTurn } from './login-order.js'
import { LoginSources } from './login-sources.js'

export interface LoginQueueOptions {
  /** The brake's clock: answers and the pace of checks are timed on `monotonic`, and held back by `sleep`. */
  clock: Pick<Clock, 'monotonic' | 'sleep'>
  /** The floors of each client's answers and the device's pace of checks (GuessPace); defaults 500, 1500 ms, 3. */
  brake?: LoginBrakeOptions
  /** The host clock that command deadlines are read on (ms since the epoch); tests inject one. */
  now?: () => number
  /** Attempts one client may have in flight, from their arrival to their answer; default 8. */
  perSource?: number
  /** Attempts waiting for their check, all clients together; default 32. */
  total?: number
}

/** An attempt's check: the passphrase's, run one at a time at the device's pace. */
export type LoginCheck = () => Promise<CommandReply>

/** What refuses an attempt without testing any guess (its shape, claims, challenge); undefined to check it. */
export type LoginScreen = () => Promise<CommandReply | undefined>

interface Waiting {
  source: string
  /** Arrival order. */
  seq: number
  deadline: unknown
  check: LoginCheck
  settle(outcome: { reply: CommandReply } | { error: unknown }): void
}

/** The 429 of an attempt that does not fit: its eJWT never read. */
export const QUEUE_FULL = 429

/**
 * The login attempts of POST /api/auth/token, as effects: the rules are pure decisions (brake.ts:
 * each client's floor; guess-pace.ts: the device's pace of checks; login-order.ts: the order of
 * checks and the bounds), and this holds the attempts, sleeps and answers as they say. A guess is
 * tested only in a check, one at a time at the pace, so parallel guesses, from one address or
 * many, gain nothing. An answer is held to its client's floor counted from its arrival; the holds
 * run side by side and take no turn, so that strangers' answers do not push the owner's back.
 * - Screened: what needs no guess tested (malformed, bad claims, no live challenge, see login.ts)
 *   is refused at once, and answered at its floor; it takes no check.
 * - Bounded: what does not fit (`perSource` in flight, `total` waiting) is refused 429 with the
 *   seconds to wait, unread, at its floor.
 * - An attempt whose deadline passed while it waited is dropped unread (504): its client had its
 *   answer from the gateway already.
 */
export class LoginQueue {
  readonly #clock: Pick<Clock, 'monotonic' | 'sleep'>
  readonly #now: () => number
  readonly #perSource: number
  readonly #total: number
  readonly #rules: BrakeRules
  #pace: Pace
  readonly #sources: LoginSources
  readonly #inFlight = new Map<string, number>()
  readonly #waiting: Waiting[] = []
  #seq = 0
  #checking = false
  #closed = false
  /** A client's recent refusals, for the order of checks. */
  readonly #refusalsOf = (source: string): number => this.#sources.refusals(source, this.#clock.monotonic())

  constructor(options: LoginQueueOptions) {
    this.#clock = options.clock
    this.#now = options.now ?? Date.now
    this.#perSource = options.perSource ?? 8
    this.#total = options.total ?? 32
    this.#rules = brakeRules(options.brake)
    this.#pace = freshPace(this.#rules)
    this.#sources = new LoginSources(options.brake ? { brake: options.brake } : {})
  }

  /** Attempts waiting for their check. */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Milliseconds an answer to `source` arriving now takes at least. */
  floor(source: string): number {
    return this.#sources.floor(source, this.#clock.monotonic())
  }

  /**
   * Answers every waiting attempt, and any that comes, 503 `stopping` unread and at once: a
   * stopping service answers them now rather than when their deadlines pass. A check under way
   * finishes.
   */
  close(): void {
    this.#closed = true
    for (const waiting of this.#waiting.splice(0)) waiting.settle({ reply: stopping() })
  }

  /**
   * Answers an attempt of `source`: `screen` first, then, unless it refused, `check` in its
   * place; no sooner than the client's floor after its arrival, and a refusal if it does not fit.
   */
  async run(source: string, deadline: unknown, check: LoginCheck, screen?: LoginScreen): Promise<CommandReply> {
    if (this.#closed) return stopping()
    const arrived = this.#clock.monotonic()
    const floor = this.#sources.floor(source, arrived)
    const own = this.#inFlight.get(source) ?? 0
    if (!fitsSource(own, this.#perSource)) {
      this.#sources.refused(source, arrived)
      await this.#hold(arrived, floor)
      return this.#refusal(own)
    }
    this.#inFlight.set(source, own + 1)
    let reply: CommandReply | undefined
    try {
      reply = await this.#answer(source, deadline, check, screen)
      return reply
    } finally {
      if (!isStopping(reply)) await this.#hold(arrived, floor)
      const left = this.#inFlight.get(source)! - 1
      if (left > 0) this.#inFlight.set(source, left)
      else this.#inFlight.delete(source)
    }
  }

  async #answer(source: string, deadline: unknown, check: LoginCheck, screen?: LoginScreen): Promise<CommandReply> {
    let refused: CommandReply | undefined
    try {
      refused = await screen?.()
    } catch (error) {
      this.#sources.refused(source, this.#clock.monotonic())
      throw error
    }
    if (refused) {
      this.#sources.refused(source, this.#clock.monotonic())
      return refused
    }
    if (this.#closed) return stopping()
    this.#dropExpired()
    const decided = arrival(this.#waiting, this.#total, source, this.#seq + 1, this.#refusalsOf)
    if (!decided.enter) {
      this.#sources.refused(source, this.#clock.monotonic())
      return this.#refusal(this.#waitingOf(source))
    }
    if ('bumped' in decided) this.#bump(decided.bumped)
    const outcome = await new Promise<{ reply: CommandReply } | { error: unknown }>((settle) => {
      this.#waiting.push({ source, seq: ++this.#seq, deadline, check, settle })
      void this.#checkAll()
    })
    if ('error' in outcome) throw outcome.error
    return outcome.reply
  }

  /** Runs the waiting checks, one at a time, each when the pace allows and the best placed first. */
  async #checkAll(): Promise<void> {
    if (this.#checking) return
    this.#checking = true
    try {
      while (this.#waiting.length > 0) {
        const before = this.#clock.monotonic()
        const wait = paceWait(this.#rules, this.#pace, before)
        if (wait > 0) {
          await this.#clock.sleep(Math.ceil(wait))
          // A clock that does not move (a test's) would never let the place come: it gets one sleep.
          if (this.#clock.monotonic() !== before) continue
        }
        this.#dropExpired()
        const turn = nextTurn(this.#waiting, this.#refusalsOf)
        if (!turn) continue
        this.#waiting.splice(this.#waiting.indexOf(turn), 1)
        this.#pace = paceTake(this.#rules, this.#pace, this.#clock.monotonic())
        await this.#check(turn)
      }
    } finally {
      this.#checking = false
    }
  }

  async #check(turn: Waiting): Promise<void> {
    let outcome: { reply: CommandReply } | { error: unknown }
    try {
      outcome = { reply: await turn.check() }
    } catch (error) {
      outcome = { error }
    }
    // Before the next place is given: the client's outcome counts at once.
    if ('reply' in outcome && outcome.reply.status === 200) this.#sources.succeeded(turn.source)
    else this.#sources.refused(turn.source, this.#clock.monotonic())
    turn.settle(outcome)
  }

  #waitingOf(source: string): number {
    return this.#waiting.filter((waiting) => waiting.source === source).length
  }

  /** `bumped` lost its place to a better placed client's attempt: refused 429, unread. */
  #bump(bumped: Waiting): void {
    this.#waiting.splice(this.#waiting.indexOf(bumped), 1)
    this.#sources.refused(bumped.source, this.#clock.monotonic())
    bumped.settle({ reply: this.#refusal(this.#waitingOf(bumped.source)) })
  }

  /** Answers 504 the waiting attempts whose deadline passed: nobody awaits them. */
  #dropExpired(): void {
    const now = this.#now()
    for (const waiting of this.#waiting.filter((w) => deadlinePassed(w.deadline, now))) {
      this.#waiting.splice(this.#waiting.indexOf(waiting), 1)
      this.#sources.refused(waiting.source, this.#clock.monotonic())
      waiting.settle({ reply: fail(504, TIMEOUT_ERROR.error, 'The login was not examined: its deadline had passed') })
    }
  }

  /** 429 with the seconds until the client's attempts ahead are through, at the sustained pace. */
  #refusal(pending: number): CommandReply {
    return {
      ...fail(QUEUE_FULL, 'too_many_requests', 'Too many login attempts are waiting; try again later'),
      retryAfter: retryAfterSeconds(this.#rules, pending),
    }
  }

  /** Waits until `floor` ms after `arrived`, on the brake's clock. */
  async #hold(arrived: number, floor: number): Promise<void> {
    // A timer may fire a little early (Node counts from libuv's cached loop time), so the time
    // left is measured again after it; a clock that does not move (a test's) gets one sleep.
    // One extra millisecond covers monotonic clocks that truncate to whole milliseconds.
    const elapsed = () => this.#clock.monotonic() - arrived
    for (let remaining = floor + 1 - elapsed(); remaining > 0; remaining = floor + 1 - elapsed()) {
      const before = this.#clock.monotonic()
      await this.#clock.sleep(Math.ceil(remaining))
      if (this.#clock.monotonic() === before) break
    }
  }
}

function isStopping(reply: CommandReply | undefined): boolean {
  return reply?.status === 503 && (reply.body as { error?: unknown } | undefined)?.error === 'stopping'
}

function stopping(): CommandReply {
  return fail(503, 'stopping', 'The device is restarting or stopping; try again')
}
