import { EntropyError } from '../hal/index.js'
import type { FaultEventType } from '../protocol/index.js'

/** The fail-state fault an operation's error reveals, if it reveals one rather than a failed operation. */
export function faultOf(err: unknown): FaultEventType | undefined {
  if (err instanceof EntropyError) return 'ENTROPY_FAILED'
  if (!(err instanceof RangeError)) return undefined
  if (err.message.includes('Maximum call stack size exceeded')) return 'STACK_OVERFLOW'
  // What V8 and node throw when the heap or an ArrayBuffer cannot be allocated.
  if (
    /allocation failed|ERR_MEMORY_ALLOCATION_FAILED/i.test(
      `${err.message} ${(err as NodeJS.ErrnoException).code ?? ''}`,
    )
  )
    return 'ALLOCATION_FAILED'
  return undefined
}
