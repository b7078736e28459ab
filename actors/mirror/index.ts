// The public face of actors/mirror/: what other folders may use of it.
export { JournalMirror } from './mirror-actor.js'
