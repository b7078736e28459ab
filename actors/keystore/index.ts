// The public face of actors/keystore/: what other folders may use of it.
export { KeystoreActor } from './keystore-actor.js'
export { RandomPool } from './random-pool.js'
