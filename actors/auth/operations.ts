import type { OperationSpec } from '../../bus/index.js'
import { type CommandRequest, operationAccess } from '../../protocol/index.js'
import { attestation, provision } from './attestation-endpoint.js'
import type { AuthContext } from './auth-context.js'
import { checkinChallenge, checkinReply } from './checkin.js'
import { readConfig, updateConfig } from './config-endpoint.js'
import { diagWipeConfig } from './diag-wipe-config.js'
import { login, loginChallenge } from './login.js'
import { initChallenge, personalise } from './personalise.js'

/**
 * The auth actor's commands. Those that change the aggregate run one at a time; challenges and
 * reads may overlap (login has its own queue behind the brake). Those for a principal are behind
 * the actor's own check of the bearer token.
 */
export function authOperations(actor: AuthContext): Record<string, OperationSpec> {
  const { guard } = actor
  return {
    init_challenge: { handler: (req) => initChallenge(actor, req) },
    init: { handler: (req) => personalise(actor, req) },
    challenge: { exclusive: false, handler: (req) => loginChallenge(actor, req) },
    login: { exclusive: false, handler: (req) => login(actor, req) },
    denied: guard.operation(operationAccess.anyPrincipal, (req) => actor.denied(req), false),
    config_get: guard.operation(operationAccess.configRead, () => readConfig(actor), false),
    config_set: guard.operation(operationAccess.configWrite, (req) => updateConfig(actor, req)),
    attestation: guard.operation(operationAccess.attestation, () => attestation(actor), false),
    provision: { handler: (req) => provision(actor, req) },
    checkin_get: { exclusive: false, handler: (req) => checkinChallenge(actor, req) },
    checkin_post: { exclusive: false, handler: (req) => checkinReply(actor, req) },
    // The DIAG build's only: no token, so nothing of it may exist in a normal build.
    ...(actor.diag ? { diag_wipe_config: { handler: (req: CommandRequest) => diagWipeConfig(actor, req) } } : {}),
  }
}
