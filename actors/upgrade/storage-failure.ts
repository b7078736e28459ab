import type { Logger } from 'pino'
import { type CommandReply, fail } from '../../protocol/index.js'

/** Staging or a slot could not be written: the device's fault, never the client's. */
export function storageFailure(err: unknown, logger: Logger): CommandReply {
  const code = (err as NodeJS.ErrnoException).code
  logger.error({ err: (err as Error).message }, 'an upgrade could not be stored')
  if (code === 'ENOSPC' || code === 'EDQUOT') return fail(507, 'no_space', 'The device has no room for the image')
  return fail(500, 'storage_error', 'The image could not be stored')
}
