import type { CommandReply, CommandRequest } from '../../protocol/index.js'
import type { AuthContext } from './auth-context.js'
import { configUpdated } from './config-updated.js'
import { wipeout } from './config-endpoint.js'

/**
 * `GET /api/diag/wipe_config` (DIAG build only, crypto-contract §6): the wipeout of
 * `POST /api/system/config`, asked by no one, on a device with or without an owner and in a fail
 * state too; the device then restarts fresh. Its CONFIG_UPDATED record says `diag: true`, so an
 * auditor tells it from an owner's wipeout. A 200 without a body, as the route's callers expect.
 */
export async function diagWipeConfig(actor: AuthContext, req: CommandRequest): Promise<CommandReply> {
  actor.logger.warn({ rid: req.rid }, 'DIAG: configuration, keys and disks wiped out; the device restarts')
  await wipeout(actor, configUpdated(200, req.rid, { wipeout: true, diag: true }), { rid: req.rid })
  return { status: 200 }
}
