/** The fail-state bits of `status.fls_state` (seed §2.5). */
export const FLS = {
  KAT: 0x01,
  ENTROPY: 0x02,
  TEMPERATURE: 0x04,
  INTEGRITY: 0x08,
  ALLOCATION: 0x10,
  STACK: 0x20,
  LOCKED: 0x40,
  SHUTDOWN: 0x80,
} as const

/**
 * One event per fault, named for what was found, so that a replay
 * of the journal's transition records needs no event data.
 */
export const FAULT_EVENTS = {
  KAT_FAILED: FLS.KAT,
  ENTROPY_FAILED: FLS.ENTROPY,
  TEMPERATURE_OUT_OF_RANGE: FLS.TEMPERATURE,
  INTEGRITY_FAILED: FLS.INTEGRITY,
  ALLOCATION_FAILED: FLS.ALLOCATION,
  STACK_OVERFLOW: FLS.STACK,
} as const

export type FaultEventType = keyof typeof FAULT_EVENTS
