import { authorized, USER_ROLES, type AccessRule } from '../../protocol/index.js'
import { keyOperationScopes, type KeyOperation } from '../../protocol/index.js'
import { CachedTokenVerifier } from '../../bus/index.js'
import { BusUnavailableError } from '../../bus/index.js'
import type { GatewayBus } from '../../bus/index.js'
import type { Clock } from '../../hal/index.js'
import { fail } from '../../protocol/index.js'
import type { CommandReply, CommandRequest, Principal } from '../../protocol/index.js'

function ruleOf(op: KeyOperation): AccessRule {
  return { roles: USER_ROLES, scopes: keyOperationScopes[op] }
}

/** Who may ask, as the key store sees it: the principal its own check found (none: anonymous), or a refusal. */
export type Admission = { principal: Principal | undefined } | { refused: CommandReply } | { denied: Principal }

/**
 * The key store does not take the gateway's word for who is asking: it verifies the bearer token
 * the gateway forwards with the auth actor (cached per token, as the gateway does) and checks
 * the role and scope itself. A connection with the gateway's bus credentials and no user's
 * token can therefore do no more than an anonymous HTTP client: an anonymous key search.
 */
export class KeyAccess {
  private readonly tokens: CachedTokenVerifier

  constructor(bus: GatewayBus, clock: Clock) {
    this.tokens = new CachedTokenVerifier(bus, clock)
  }

  async admit(op: KeyOperation, req: CommandRequest): Promise<Admission> {
    if (req.bearer === undefined) {
      // Only a search may be anonymous, and the search itself decides whether this one may.
      if (op === 'search') return { principal: undefined }
      return { refused: fail(401, 'token_required', 'This request needs a bearer token') }
    }
    let principal: Principal | undefined
    try {
      principal = await this.tokens.verify(req.bearer)
    } catch (err) {
      if (err instanceof BusUnavailableError)
        return { refused: fail(503, 'bus_unavailable', 'The auth service is not reachable; try again') }
      throw err
    }
    if (!principal) return { refused: fail(401, 'invalid_token', 'The bearer token is invalid or has expired') }
    // A malformed KID passes here: the operation answers (and journals) the 400 and checks the exact scope.
    if (!authorized(ruleOf(op), principal, req.params ?? {}, true)) return { denied: principal }
    return { principal }
  }
}
