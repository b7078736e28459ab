import type { IdentityState } from '../protocol/index.js'
import type { Principal } from '../protocol/index.js'
import type { Clock } from '../hal/index.js'
import { BusUnavailableError } from './errors.js'
import type { GatewayBus, TokenVerifier } from './types.js'

interface Verified {
  principal: Principal
  exp: number
}

/**
 * Bearer tokens are HMAC-signed by the auth actor with a secret that never leaves it, so the
 * gateway asks the auth actor once per token and remembers the answer until the token
 * expires or the auth actor restarts (its tokens die with it).
 */
export class CachedTokenVerifier implements TokenVerifier {
  private readonly cache = new Map<string, Verified>()
  private boot: string | undefined

  constructor(
    private readonly bus: GatewayBus,
    private readonly clock: Clock,
    private readonly maxEntries = 4096,
  ) {}

  async verify(bearer: string): Promise<Principal | undefined> {
    const identity = this.bus.readModel<IdentityState>('auth')
    if (!identity) throw new BusUnavailableError('the auth service is not reachable')
    this.follow(identity.boot)
    const now = Math.floor(this.clock.now() / 1000)
    const hit = this.cache.get(bearer)
    if (hit && hit.exp > now) return hit.principal
    this.cache.delete(bearer)

    const reply = await this.bus.request('auth', 'verify', { rid: 'verify', tls: false, body: { token: bearer } })
    if (reply.status !== 200) return undefined
    const { sub, scope, exp, boot } = reply.body as { sub: string; scope: string; exp: number; boot?: string }
    const principal = { sub, scope }
    // The answer is kept only for the auth incarnation that gave it, and only while that one is
    // still the current one: a reply of an old incarnation that arrives after the cache moved on
    // to its successor must not outlive it there.
    const current = this.bus.readModel<IdentityState>('auth')
    if (current) this.follow(current.boot)
    if (boot === undefined || boot !== this.boot) return principal
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!)
    this.cache.set(bearer, { principal, exp })
    return principal
  }

  /** Forgets every entry when the auth actor restarted (its tokens died with it). */
  private follow(boot: string): void {
    if (boot === this.boot) return
    this.cache.clear()
    this.boot = boot
  }
}
