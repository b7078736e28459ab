import type { BrakeRules } from './brake.js'

/** Where the device's pace of checks stands: the last check's start, and its bucket as of `creditAt`. */
export interface Pace {
  /** The bucket in ms of refill: a check costs `slowMs` of it. */
  readonly credit: number
  readonly creditAt: number
  readonly lastStart: number
}

/**
 * The device's pace of passphrase checks, all clients together, as decisions alone (the login
 * queue sleeps on them): checks at least `baseMs` apart, and no more than `threshold` +
 * t / `slowMs` of them in any t ms (a bucket of `threshold` checks, refilled one per `slowMs`).
 * With the brake's numbers, a check at 0, 0.5, 1, 1.5, 3, 4.5 s…: the times at which one client
 * guessing alone got its attempts through when the device examined one at a time. So any number
 * of addresses guessing together get what one had: 2 checks a second at most, 0.67 sustained.
 * Every check takes its place, whatever its outcome: a success elsewhere neither speeds nor slows
 * anyone's next check, so the pace tells nobody how another's went.
 */
export function freshPace(rules: BrakeRules): Pace {
  return { credit: rules.threshold * rules.slowMs, creditAt: -Infinity, lastStart: -Infinity }
}

/** Milliseconds from `now` (the brake's monotonic clock) until the next check may start; 0 for now. */
export function paceWait(rules: BrakeRules, pace: Pace, now: number): number {
  const short = rules.slowMs - creditAt(rules, pace, now)
  return Math.max(0, short, pace.lastStart + rules.baseMs - now)
}

/** A check starts at `now` (no sooner than paceWait allows): it takes its place. */
export function paceTake(rules: BrakeRules, pace: Pace, now: number): Pace {
  return { credit: creditAt(rules, pace, now) - rules.slowMs, creditAt: now, lastStart: now }
}

/** Whole seconds until `pending` more checks are through at the sustained pace, at least 1: a 429's Retry-After. */
export function retryAfterSeconds(rules: BrakeRules, pending: number): number {
  return Math.max(1, Math.ceil((pending * rules.slowMs) / 1000))
}

function creditAt(rules: BrakeRules, pace: Pace, now: number): number {
  return Math.min(rules.threshold * rules.slowMs, pace.credit + Math.max(0, now - pace.creditAt))
}
