// The public face of actors/logger/: what other folders may use of it.
export { LoggerActor } from './logger-actor.js'
