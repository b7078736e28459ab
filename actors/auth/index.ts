// The public face of actors/auth/: what other folders may use of it.
export { AuthActor } from './auth-actor.js'
export { AUTH_RECORD_TYPES } from './journal-tampers.js'
export { LOGIN_MAX_LIFETIME } from './bearer.js'
export { timedNonce } from './challenges.js'
export { EjwtError, parseEjwt } from './ejwt.js'
export { authOperations } from './operations.js'
