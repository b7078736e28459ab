// The public face of actors/storage/: what other folders may use of it.
export type { NbdListen } from './nbd-server.js'
export { StorageActor } from './storage-actor.js'
