import { base64Field } from '../../protocol/index.js'

/**
 * 32 bytes: the Unix time (seconds) little-endian in bytes 0–3, then 28 random bytes. The format
 * of login challenges, the config `nonce` and the logger key nonce.
 */
export function timedNonce(now: number, random: (n: number) => Uint8Array): Uint8Array {
  const tail = random(28)
  if (tail.length !== 28) throw new RangeError('the random source must deliver 28 bytes')
  const bytes = new Uint8Array(32)
  new DataView(bytes.buffer).setUint32(0, Math.floor(now) >>> 0, true)
  bytes.set(tail, 4)
  return bytes
}

export interface Challenge {
  /** Standard padded base64 of a timedNonce. */
  jti: string
  /** Unix seconds; the challenge is live while now <= exp. */
  exp: number
}

export interface ChallengeBookOptions {
  random(n: number): Uint8Array
  /** Seconds a challenge stays live; default 60. */
  lifetime?: number
  /** Most live challenges kept; beyond it, the oldest of the client holding the most is dropped. Default 1024. */
  capacity?: number
  /** Most live challenges one client (see clientSource) holds; its oldest is dropped beyond it. Default `capacity`. */
  perSource?: number
}

/**
 * Single-use, short-lived challenges: the login `jti`, the personalisation `jti`, and (in a book
 * of its own, so that a login challenge can never pass for one) the config `nonce`. Bounded per
 * client, so that no flood of requests from one client can push out a challenge issued to another
 * within its lifetime: a flood only recycles its own client's challenges.
 */
export class ChallengeBook<V = undefined> {
  // Keyed by the canonical base64 of the bytes; Map order is issue order, so the oldest come first.
  readonly #live = new Map<string, { exp: number; source: string; value: V }>()
  // Each client's live challenges, oldest first.
  readonly #bySource = new Map<string, Set<string>>()
  readonly #random: (n: number) => Uint8Array
  readonly #lifetime: number
  readonly #capacity: number
  readonly #perSource: number

  constructor(options: ChallengeBookOptions) {
    this.#random = options.random
    this.#lifetime = options.lifetime ?? 60
    this.#capacity = options.capacity ?? 1024
    this.#perSource = options.perSource ?? this.#capacity
    if (!(this.#capacity >= 1) || !(this.#perSource >= 1))
      throw new RangeError('capacity and perSource must be at least 1')
  }

  get size(): number {
    return this.#live.size
  }

  /**
   * A new challenge for the client `source` (the bucket clientSource gives; one shared bucket by default), with what
   * its book keeps of it (`value`, for `entry`).
   */
  issue(now: number, source = '', ...[value]: V extends undefined ? [] : [V]): Challenge {
    this.#purge(now)
    const own = this.#bySource.get(source)
    if (own && own.size >= this.#perSource) this.#drop(own.values().next().value as string)
    if (this.#live.size >= this.#capacity) this.#drop(this.#largest().values().next().value as string)
    const jti = Buffer.from(timedNonce(now, this.#random)).toString('base64')
    const exp = Math.floor(now) + this.#lifetime
    this.#live.set(jti, { exp, source, value: value as V })
    if (own) own.add(jti)
    else this.#bySource.set(source, new Set([jti]))
    return { jti, exp }
  }

  /** True once for a live challenge (any base64 spelling of its bytes); it is gone afterwards either way. */
  consume(jti: unknown, now: number): boolean {
    const key = this.#key(jti)
    if (key === undefined) return false
    const entry = this.#live.get(key)
    if (entry === undefined) return false
    this.#drop(key)
    return now <= entry.exp
  }

  /** True for a live challenge, which stays so: the login's screen, which must not use it up. */
  live(jti: unknown, now: number): boolean {
    const key = this.#key(jti)
    const entry = key === undefined ? undefined : this.#live.get(key)
    return entry !== undefined && now <= entry.exp
  }

  /** A live challenge's value; the challenge stays live (`consume` ends it). */
  entry(jti: unknown, now: number): V | undefined {
    const key = this.#key(jti)
    const entry = key === undefined ? undefined : this.#live.get(key)
    return entry !== undefined && now <= entry.exp ? entry.value : undefined
  }

  #key(jti: unknown): string | undefined {
    const bytes = base64Field(jti)
    return bytes?.length === 32 ? Buffer.from(bytes).toString('base64') : undefined
  }

  #drop(key: string): void {
    const entry = this.#live.get(key)
    if (!entry) return
    this.#live.delete(key)
    const own = this.#bySource.get(entry.source)
    own?.delete(key)
    if (own?.size === 0) this.#bySource.delete(entry.source)
  }

  /** The challenges of the client holding the most (reached only when many clients each hold many). */
  #largest(): Set<string> {
    let largest = new Set<string>()
    for (const own of this.#bySource.values()) if (own.size > largest.size) largest = own
    return largest
  }

  // Stops at the first live entry: issue order is expiry order unless the clock was set back,
  // and any expired entry left behind is still refused by consume and pushed out by capacity.
  #purge(now: number): void {
    for (const [key, { exp }] of this.#live) {
      if (now <= exp) return
      this.#drop(key)
    }
  }
}
