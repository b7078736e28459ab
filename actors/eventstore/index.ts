// The public face of actors/eventstore/: what other folders may use of it.
export { EventstoreActor } from './eventstore-actor.js'
export { RemoteJournal } from './remote-journal.js'
