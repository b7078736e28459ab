import type { OperationSpec } from '../../bus/index.js'
import { attestation, provision } from './attestation-endpoint.js'
import type { AuthActor } from './auth-actor.js'
import { checkinChallenge, checkinReply } from './checkin.js'
import { readConfig, updateConfig } from './config-endpoint.js'
import { login, loginChallenge, verifyToken } from './login.js'
import { initChallenge, personalise } from './personalise.js'

/**
 * The auth actor's commands. Those that change the aggregate run one at a time; token checks,
 * challenges and reads may overlap (login has its own queue behind the brake).
 */
export function authOperations(actor: AuthActor): Record<string, OperationSpec> {
  return {
    init_challenge: { handler: () => initChallenge(actor) },
    init: { handler: (req) => personalise(actor, req) },
    challenge: { exclusive: false, handler: () => loginChallenge(actor) },
    login: { exclusive: false, handler: (req) => login(actor, req) },
    verify: { exclusive: false, handler: (req) => verifyToken(actor, req) },
    denied: { exclusive: false, handler: (req) => actor.denied(req.principal, req) },
    config_get: { exclusive: false, handler: () => readConfig(actor) },
    config_set: { handler: (req) => updateConfig(actor, req) },
    attestation: { exclusive: false, handler: () => attestation(actor) },
    provision: { handler: (req) => provision(actor, req) },
    checkin_get: { exclusive: false, handler: () => checkinChallenge(actor) },
    checkin_post: { exclusive: false, handler: (req) => checkinReply(actor, req) },
  }
}
