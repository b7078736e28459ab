import { UsageError } from '../index.js'
/** Something found in the files (exit 1), as opposed to a usage error (exit 2). */
export class AuditFinding extends Error {
  override readonly name = 'AuditFinding'
}

export function usage(message: string): never {
  throw new UsageError(message)
}
