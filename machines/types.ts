import type { AnyStateMachine } from 'xstate'

/** A machine as the journal knows it: transitions are recorded with its id and version. */
export interface VersionedMachine<M extends AnyStateMachine = AnyStateMachine> {
  machine: M
  version: number
}
