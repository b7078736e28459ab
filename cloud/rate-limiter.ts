/** A token bucket per client: `rate` requests a second on average, `burst` at once. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    /** Above this many clients, those whose bucket has refilled are forgotten: an idle client costs nothing. */
    private readonly maxClients = 10_000,
  ) {}

  /** 0 when `client` may go on at `nowMs`, else the seconds after which it may. */
  take(client: string, nowMs: number): number {
    const bucket = this.buckets.get(client) ?? { tokens: this.burst, at: nowMs }
    bucket.tokens = Math.min(this.burst, bucket.tokens + (Math.max(0, nowMs - bucket.at) / 1000) * this.rate)
    bucket.at = nowMs
    if (!this.buckets.has(client)) {
      if (this.buckets.size >= this.maxClients) this.forgetIdle(nowMs)
      this.buckets.set(client, bucket)
    }
    if (bucket.tokens < 1) return Math.ceil((1 - bucket.tokens) / this.rate)
    bucket.tokens -= 1
    return 0
  }

  private forgetIdle(nowMs: number): void {
    for (const [client, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.at) / 1000) * this.rate >= this.burst) this.buckets.delete(client)
    }
  }
}
