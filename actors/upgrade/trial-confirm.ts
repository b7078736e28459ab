import { type CommandReply, type CommandRequest, fail, type SystemState } from '../../protocol/index.js'
import type { ReadModelBus } from '../../bus/index.js'
import type { Pipeline } from './pipeline.js'

/**
 * `confirm`: the supervisor asks once a trial boot's device is up. The machine takes CONFIRMED in
 * `confirming` only, and only from a device in no fail state; `fls_state` comes from the system's
 * read model (0xff, a fail state, while there is none).
 */
export async function confirmTrial(fw: Pipeline, models: ReadModelBus, req: CommandRequest): Promise<CommandReply> {
  await models.whenReady()
  const fls = models.readModel<SystemState>('system')?.status.fls_state ?? 0xff
  const refused = await fw.refusal({ type: 'CONFIRMED', fls }, req)
  if (refused === undefined) return { status: 200 }
  // In `confirming` only the health guard refuses.
  if (refused === 'confirming')
    return fail(409, 'device_fault', `The new firmware is in a fail state (fls_state ${fls}): not confirmed`)
  return fail(409, 'no_trial', 'This boot is not a trial boot')
}
