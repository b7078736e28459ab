/**
 * The machine cannot take this event in the state it is in: nothing was journaled and nothing
 * changed. The host maps it to the contract's answer for that case (typically a 409).
 */
export class EventRefusedError extends Error {
  override readonly name = 'EventRefusedError'

  constructor(
    readonly machine: string,
    readonly instance: string | undefined,
    readonly state: string,
    readonly event: string,
  ) {
    super(`${instance === undefined ? machine : `${machine} ${instance}`} in ${state} cannot take ${event}`)
  }
}
