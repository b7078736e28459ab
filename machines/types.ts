import type { AnyStateMachine } from 'xstate'

/** A machine as the journal knows it: transitions are recorded with its id and version. */
export interface VersionedMachine<M extends AnyStateMachine = AnyStateMachine> {
  machine: M
  version: number
  /** Which one, where a machine runs more than once (Disk 0 and Disk 1); recorded with its transitions. */
  instance?: string
}
