import { type CommandReply, fail } from '../../protocol/index.js'
import type { CommandHandler } from '../../bus/index.js'
import type { FaultInjector, FormatHoldPoint } from '../../hal/index.js'

/** What a sim command asks for (`hemd sim ...`, over `hem.<devid>.cmd.system.sim`). */
export type SimCommand =
  | { action: 'temperature'; celsius: number | null }
  | { action: 'entropy'; fault: 'none' | 'stuck' | 'biased' }
  | { action: 'disk'; full: boolean }
  | { action: 'format'; hold: FormatHoldPoint | null }
  | { action: 'corrupt-journal' }
  | { action: 'corrupt-key' }
  | { action: 'status' }

interface Sampled {
  sample(): Promise<void>
  readonly health: { readonly fls: number }
}

/**
 * The simulator's control subject: only a sim HAL has a FaultInjector, so a device on real
 * hardware has no such operation at all. A sensor fault is sampled at once, so the answer
 * already shows the fail state it caused.
 */
export function simControl(faults: FaultInjector, system: Sampled): CommandHandler {
  return async (req): Promise<CommandReply> => {
    const command = parse(req.body)
    if (typeof command === 'string') return fail(400, 'bad_request', command)
    let result: Record<string, unknown> = {}
    switch (command.action) {
      case 'temperature':
        await faults.setTemperature(command.celsius ?? undefined)
        break
      case 'entropy':
        await faults.setEntropy(command.fault)
        break
      case 'disk':
        await faults.setDiskFull(command.full)
        break
      case 'format':
        await faults.holdFormat(command.hold ?? undefined)
        break
      case 'corrupt-journal':
        result = await faults.corruptJournal()
        break
      case 'corrupt-key': {
        const corrupted = await faults.corruptKeySlot()
        if (!corrupted) return fail(404, 'no_key', 'No key slot holds a record to corrupt')
        result = corrupted
        break
      }
      case 'status':
        break
    }
    await system.sample()
    return { status: 200, body: { ...result, fls_state: system.health.fls } }
  }
}

function parse(body: unknown): SimCommand | string {
  if (typeof body !== 'object' || body === null) return 'the body must be an object with an `action`'
  const { action, celsius, fault, full, hold } = body as Record<string, unknown>
  switch (action) {
    case 'temperature':
      if (celsius === null || (typeof celsius === 'number' && Number.isFinite(celsius) && Math.abs(celsius) <= 1000))
        return { action, celsius }
      return '`celsius` must be a number of degrees (or null for the normal reading)'
    case 'entropy':
      if (fault === 'none' || fault === 'stuck' || fault === 'biased') return { action, fault }
      return '`fault` must be none, stuck or biased'
    case 'disk':
      if (typeof full === 'boolean') return { action, full }
      return '`full` must be true or false'
    case 'format':
      if (hold === null || hold === 'start' || hold === 'middle' || hold === 'end') return { action, hold }
      return '`hold` must be start, middle, end (where every format stops) or null (none stops)'
    case 'corrupt-journal':
    case 'corrupt-key':
    case 'status':
      return { action }
    default:
      return (
        `unknown action ${JSON.stringify(action)}: ` +
        'temperature, entropy, disk, format, corrupt-journal, corrupt-key or status'
      )
  }
}
