import { BearerVerifier, type IdentityState, type Principal } from '../protocol/index.js'
import type { Clock } from '../hal/index.js'
import { BusUnavailableError } from './errors.js'
import type { GatewayBus } from '../bus/index.js'
import type { TokenVerifier } from './types.js'

/**
 * Admission's token check, with no round trip: the signature with the auth service's public key
 * from the gateway's identity projection, and the expiry. The services behind the gateway check
 * the token again themselves; this only keeps what they would refuse from reaching them.
 */
export class IdentityTokens implements TokenVerifier {
  readonly #tokens: BearerVerifier

  constructor(
    private readonly bus: GatewayBus,
    clock: Clock,
  ) {
    this.#tokens = new BearerVerifier({ now: () => Math.floor(clock.now() / 1000) })
  }

  verify(bearer: string): Principal | undefined {
    const identity = this.bus.readModel<IdentityState>('auth')
    if (!identity) throw new BusUnavailableError('the auth service is not reachable')
    return this.#tokens.verify(bearer, identity.token_key)
  }
}
