import { LoginBrake, type LoginBrakeOptions } from './brake.js'

/** How long a client's refusals are remembered after its last one (ms of the brake's clock). */
const MEMORY_MS = 15 * 60_000

export interface LoginSourcesOptions {
  /** The floors of each client's answers. */
  brake?: LoginBrakeOptions
  /** Clients remembered at most; beyond it the one refused least recently is forgotten. Default 4096. */
  capacity?: number
}

interface Remembered {
  /** Its refusals in a row: the floor of its answers. */
  brake: LoginBrake
  /** Its refusals since it was last let in or forgotten: its place in the login queue. */
  refusals: number
  /** When it was last refused. */
  at: number
}

/**
 * What the login queue remembers of each client (see clientSource) between its attempts, and
 * nothing of any other: its own refusals in a row, which set the floor of its answers (the
 * brake: 500 ms, 1500 ms after 3), and its count of recent refusals, which sets its place in the queue.
 * So the floor of an answer depends on its client's own outcomes only. A success forgets the
 * client; so do 15 quiet minutes. Bounded: a client with no refusal is not kept at all.
 */
export class LoginSources {
  // Map order is the order of the last refusals: the least recent first.
  readonly #clients = new Map<string, Remembered>()
  readonly #brake: LoginBrakeOptions
  readonly #capacity: number
  readonly #fresh: LoginBrake

  constructor(options: LoginSourcesOptions = {}) {
    this.#brake = options.brake ?? {}
    this.#capacity = options.capacity ?? 4096
    this.#fresh = new LoginBrake(this.#brake)
  }

  /** Milliseconds an answer to `source` must take at least, if it arrives at `now`. */
  floor(source: string, now: number): number {
    return (this.#recall(source, now)?.brake ?? this.#fresh).minimumDuration()
  }

  /** The refusals `source` had lately: the fewer, the sooner its attempts are checked. */
  refusals(source: string, now: number): number {
    return this.#recall(source, now)?.refusals ?? 0
  }

  /** An examined attempt of `source` was let in: it is forgotten. */
  succeeded(source: string): void {
    this.#clients.delete(source)
  }

  /**
   * An attempt of `source` was refused, examined (400, 401, 409) or unread (429, 504): a failure
   * in a row, and a refusal. Its own answers slow down, whatever the reason: a flood of them too.
   */
  refused(source: string, now: number): void {
    const remembered = this.#recall(source, now) ?? { brake: new LoginBrake(this.#brake), refusals: 0, at: now }
    this.#clients.delete(source)
    if (this.#clients.size >= this.#capacity) this.#clients.delete(this.#clients.keys().next().value as string)
    remembered.brake.record(false)
    remembered.refusals += 1
    remembered.at = now
    this.#clients.set(source, remembered)
  }

  #recall(source: string, now: number): Remembered | undefined {
    const remembered = this.#clients.get(source)
    if (remembered && now - remembered.at > MEMORY_MS) {
      this.#clients.delete(source)
      return undefined
    }
    return remembered
  }
}
