// The public face of the crypto engines: the interface, both engines, their KATs and the choice.
export type { CryptoEngine, Curve, GcmSealed, KeyPair, RandomSource } from './types.js'
export { AuthenticationError, CipherError, CryptoInputError } from './errors.js'
export { nativeEngine } from './native-engine.js'
export { nobleEngine } from './noble-engine.js'
export { KAT_NAMES, runKats, type KatResult } from './kats.js'
export { chooseEngine, type EngineChoice } from './choose-engine.js'
