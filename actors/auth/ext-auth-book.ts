import { initialTransition, type SnapshotFrom, transition } from 'xstate'
import { type ExtAuthEvent, type ExtAuthKind, machineRegistry, stateName } from '../../machines/index.js'
import { type Challenge, ChallengeBook } from './challenges.js'

type ExtAuthSnapshot = SnapshotFrom<typeof machineRegistry.extAuth.machine>

interface Held<F> {
  snapshot: ExtAuthSnapshot
  facts: F
}

export interface ExtAuthBookOptions {
  random(n: number): Uint8Array
  /** Seconds a challenge stays in the book. */
  lifetime: number
}

/**
 * The challenges of one kind the device gave external authenticators this boot (ext-auth contract §1.1, §1.4), each
 * with its extAuth machine and the facts its answer is checked against. Bounded like the login challenges (64 per
 * client, 4096 in all, the oldest of the busiest client dropped), so that a flood of strangers only recycles its own.
 * The machines are decided here without a journal (machines/ext-auth.ts says why); a challenge whose machine ends
 * leaves the book, so a second answer finds none.
 */
export class ExtAuthBook<F> {
  readonly #book: ChallengeBook<Held<F>>
  readonly #kind: ExtAuthKind

  constructor(kind: ExtAuthKind, options: ExtAuthBookOptions) {
    this.#kind = kind
    this.#book = new ChallengeBook<Held<F>>({
      random: options.random,
      lifetime: options.lifetime,
      capacity: 4096,
      perSource: 64,
    })
  }

  get size(): number {
    return this.#book.size
  }

  issue(now: number, source: string, facts: F): Challenge {
    const [snapshot] = initialTransition(machineRegistry.extAuth.machine, { kind: this.#kind })
    return this.#book.issue(now, source, { snapshot, facts })
  }

  /** The facts of a challenge still waiting for its answer; undefined for one unknown, ended or past its time. */
  facts(jti: unknown, now: number): F | undefined {
    return this.#book.entry(jti, now)?.facts
  }

  /**
   * Ends the challenge as `event` says, and it leaves the book: the state it ends in, or undefined when it is not
   * waiting (or its machine does not take the event, such as a pairing's challenge offered as an approval's).
   */
  end(jti: unknown, now: number, event: ExtAuthEvent): string | undefined {
    const held = this.#book.entry(jti, now)
    if (!held) return undefined
    const [next] = transition(machineRegistry.extAuth.machine, held.snapshot, event)
    if (next.status !== 'done') return undefined
    this.#book.consume(jti, now)
    return stateName(next)
  }
}

/** What a pairing challenge (`ext/init`) keeps: the broker key its `request` went to. */
export interface PairingFacts {
  epk: Uint8Array
}

/** What an approval challenge (`ext/request`) keeps: the scope asked, the authreq's `exp`, and the caller's cap. */
export interface ApprovalFacts {
  scope: string
  expires: number
  /** The ext/request body's `exp` when given and in the future: the bearer's `exp` is at most this (§1.5). */
  bound?: number
}
