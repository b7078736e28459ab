import {
  type BrakeRules,
  brakeRules,
  floorOf,
  type LoginBrakeOptions,
  recalled,
  refusedAt,
  type Standing,
} from './brake.js'

export interface LoginSourcesOptions {
  /** The floors of each client's answers. */
  brake?: LoginBrakeOptions
  /** Clients remembered at most; beyond it the one refused least recently is forgotten. Default 4096. */
  capacity?: number
}

/**
 * The brake's standing of each client (see clientSource) between its attempts, and nothing of
 * any other: its refusals since it was last let in, which set the floor of its answers and its
 * place in the login queue. What a standing means is brake.ts's; this keeps them, bounded: a
 * client with no refusal is not kept at all, and beyond `capacity` the one refused least
 * recently is forgotten.
 */
export class LoginSources {
  // Map order is the order of the last refusals: the least recent first.
  readonly #clients = new Map<string, Standing>()
  readonly #rules: BrakeRules
  readonly #capacity: number

  constructor(options: LoginSourcesOptions = {}) {
    this.#rules = brakeRules(options.brake)
    this.#capacity = options.capacity ?? 4096
  }

  /** Milliseconds an answer to `source` must take at least, if it arrives at `now`. */
  floor(source: string, now: number): number {
    return floorOf(this.#rules, this.#recall(source, now))
  }

  /** The refusals `source` had lately: the fewer, the sooner its attempts are checked. */
  refusals(source: string, now: number): number {
    return this.#recall(source, now)?.refusals ?? 0
  }

  /** An examined attempt of `source` was let in: it is forgotten. */
  succeeded(source: string): void {
    this.#clients.delete(source)
  }

  /** An attempt of `source` was refused at `now`, examined or unread. */
  refused(source: string, now: number): void {
    const standing = refusedAt(this.#clients.get(source), now)
    this.#clients.delete(source)
    if (this.#clients.size >= this.#capacity) this.#clients.delete(this.#clients.keys().next().value as string)
    this.#clients.set(source, standing)
  }

  #recall(source: string, now: number): Standing | undefined {
    const standing = recalled(this.#clients.get(source), now)
    if (!standing) this.#clients.delete(source)
    return standing
  }
}
