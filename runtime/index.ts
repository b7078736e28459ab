// The public face of runtime/: what other folders may use of it.
export { bootedFromEnv, EXIT_UPGRADE, runLauncher, type RuntimeMessage } from './launcher.js'
export { HEMD_NODE_FLAGS } from './node-flags.js'
export { readSimControl } from './sim-control-file.js'
export type { Device, Endpoint } from './types.js'
