import type { CommandHandler, OperationSpec } from '../../bus/index.js'
import type { Clock } from '../../hal/index.js'
import {
  authorized,
  BearerVerifier,
  type CommandReply,
  type CommandRequest,
  fail,
  type IdentityState,
  type OperationAccess,
} from '../../protocol/index.js'
import type { JournalPort } from './journal-port.js'
import { scopeCheckEntry } from './scope-check-entry.js'

export interface BearerGuardOptions {
  /** The auth service's read model as this service follows it: the token key, and whether the device is fresh. */
  identity(): IdentityState | undefined
  clock: Clock
  journal: JournalPort
}

/** The request as the operation may act on it (with the principal this service verified, if any), or the refusal. */
export type Admission = { request: CommandRequest } | { refused: CommandReply }

/**
 * A service's own check of who is asking. Nothing another process says about the caller counts:
 * the bearer token it forwards is verified here with the auth service's public key, and only the
 * principal found in it reaches the operation, after the role and scope check of the operation's
 * rule. A scope whose subject only the operation knows (a KID in the body, the disk a storage scope
 * names) passes here when malformed and is checked exactly where it is known.
 */
export class BearerGuard {
  readonly #tokens: BearerVerifier

  constructor(private readonly o: BearerGuardOptions) {
    this.#tokens = new BearerVerifier({ now: () => Math.floor(o.clock.now() / 1000) })
  }

  /** `handler` behind this guard: it runs only for a caller that `access` admits. */
  operation(access: OperationAccess, handler: CommandHandler, exclusive?: boolean): OperationSpec {
    return {
      ...(exclusive !== undefined ? { exclusive } : {}),
      handler: async (req) => {
        const admission = await this.admit(access, req)
        return 'refused' in admission ? admission.refused : handler(admission.request)
      },
    }
  }

  async admit(access: OperationAccess, req: CommandRequest): Promise<Admission> {
    const { bearer, principal: _claimed, ...request } = req
    const identity = this.o.identity()
    if (!identity) return { refused: fail(503, 'bus_unavailable', 'The device identity is not known yet; try again') }
    if (bearer === undefined) {
      if (access.auth === 'optional' || (access.auth === 'token-unless-fresh' && !identity.inited)) return { request }
      return { refused: fail(401, 'token_required', 'This request needs a bearer token') }
    }
    const claims = typeof bearer === 'string' ? this.#tokens.verify(bearer, identity.token_key) : undefined
    if (!claims) return { refused: fail(401, 'invalid_token', 'The bearer token is invalid or has expired') }
    const admitted = { ...request, principal: { sub: claims.sub, scope: claims.scope } }
    if (!authorized(access, admitted.principal, request.params ?? {}, true))
      return { refused: await this.denied(admitted) }
    return { request: admitted }
  }

  /** FAILED_SCOPE_CHECK (journaled first: if the journal cannot take it, the 403 is not given), then 403. */
  async denied(
    req: CommandRequest,
    message = 'The token scope or role does not permit this request',
  ): Promise<CommandReply> {
    await this.o.journal.append([scopeCheckEntry(req)])
    return fail(403, 'forbidden', message)
  }
}
