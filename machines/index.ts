export { lifecycleMachine, lifecycleVersion } from './lifecycle.js'
export type { VersionedMachine } from './types.js'
