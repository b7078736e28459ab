import type { JsonBucket } from './json-bucket.js'
import { keyName } from './notify-fields.js'
import { NotifyRefusal } from './notify-refusal.js'

export interface RateRule {
  /** Requests one eid may make in a window. */
  limit: number
  windowSeconds: number
}

/**
 * Decision: at most 10 pairings begun per device in 10 minutes (a human scans each; a device holds 8) and
 * 30 approval requests per device a minute (a login asks one; the scripts ask two). On top of the front's
 * per-address limit: a device behind many addresses, or many clients of one device, are still held.
 */
export const REGISTER_RATE: RateRule = { limit: 10, windowSeconds: 600 }
export const EVENT_RATE: RateRule = { limit: 30, windowSeconds: 60 }

/** Compare-and-set attempts before a contended counter counts as full (fail closed). */
const ATTEMPTS = 8

/**
 * A fixed-window counter per eid, shared by every instance of the cloud through the bucket. Counted
 * only for requests that proved to be the device's (after their MAC checks), so nobody can spend a
 * device's allowance for it.
 */
export class EidRateLimit {
  constructor(
    private readonly bucket: JsonBucket<number>,
    private readonly route: string,
    private readonly rule: RateRule,
  ) {}

  /** Counts one request of `eid`; a 429 when the window's allowance is spent. */
  async take(eid: Uint8Array, now: number): Promise<void> {
    const key = `${this.route}.${keyName(eid)}.${Math.floor(now / this.rule.windowSeconds)}`
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const count = await this.bucket.get(key)
      if (count && count.value >= this.rule.limit) break
      const counted = count
        ? await this.bucket.update(key, count.value + 1, count.revision)
        : await this.bucket.create(key, 1)
      if (counted) return
    }
    throw new NotifyRefusal(429, 'rate_limited', `too many ${this.route} requests for this device; try again later`)
  }
}
