import type { OperationSpec } from '../../bus/index.js'
import { BACKUP_OPS, type CommandRequest, operationAccess } from '../../protocol/index.js'
import { attestation, provision } from './attestation-endpoint.js'
import { backup, restore } from './backup-restore.js'
import type { AuthContext } from './auth-context.js'
import { checkinChallenge, checkinReply } from './checkin.js'
import { readConfig, updateConfig } from './config-endpoint.js'
import { diagWipeConfig } from './diag-wipe-config.js'
import { extInit } from './ext-init.js'
import { extMac } from './ext-mac.js'
import { extRequest } from './ext-request.js'
import { extToken } from './ext-token.js'
import { extValidate } from './ext-validate.js'
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
    // The external authenticator's (ext-auth contract §1): they change no aggregate, so they overlap.
    ext_init: guard.operation(operationAccess.extPair, (req) => extInit(actor, req), false),
    ext_validate: {
      exclusive: false,
      // The user's token goes on to the key store, which checks it itself: the admitted request no longer has it.
      handler: async (req: CommandRequest) => {
        const admission = await guard.admit(operationAccess.extPair, req)
        return 'refused' in admission ? admission.refused : extValidate(actor, admission.request, req.bearer!)
      },
    },
    ext_mac: guard.operation(operationAccess.extPair, (req) => extMac(actor, req), false),
    ext_request: { exclusive: false, handler: (req) => extRequest(actor, req) },
    ext_token: { exclusive: false, handler: (req) => extToken(actor, req) },
    // Backups (docs/backup.md): the master's token goes on to the key store, which checks it again.
    backup: {
      handler: async (req: CommandRequest) => {
        const admission = await guard.admit(operationAccess.backup, req)
        return 'refused' in admission ? admission.refused : backup(actor, admission.request, req.bearer!)
      },
    },
    backup_chunk: { exclusive: false, handler: (req) => actor.keystore(BACKUP_OPS.chunk, req) },
    restore: { handler: (req) => restore(actor, req) },
    // The DIAG build's only: no token, so nothing of it may exist in a normal build.
    ...(actor.diag ? { diag_wipe_config: { handler: (req: CommandRequest) => diagWipeConfig(actor, req) } } : {}),
  }
}
