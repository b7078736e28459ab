// The public face of actors/system/: what other folders may use of it.
export type { SimCommand } from './sim-control.js'
export { SystemActor } from './system-actor.js'
