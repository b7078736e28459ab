// The public face of actors/upgrade/: what other folders may use of it.
export { UpgradeActor } from './upgrade-actor.js'
