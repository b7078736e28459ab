// The public face of the crypto engines: the interface, both engines, their KATs and the choice.
export type {
  CryptoEngine,
  Curve,
  Digest,
  EcdsaDigest,
  EdAlgorithm,
  EdCurve,
  GcmSealed,
  KeyPair,
  MlDsaVariant,
  MlKemVariant,
  PostQuantum,
  RandomSource,
  SecCurve,
} from './types.js'
export { AuthenticationError, CipherError, CryptoInputError } from './errors.js'
export { eddsaPublicKeyValid } from './eddsa-public-key-valid.js'
export { montgomeryPublicKeyValid } from './montgomery-public-key-valid.js'
export { nativeEngine } from './native-engine.js'
export { nobleEngine } from './noble-engine.js'
export { compressedSecPoint } from './noble-curves.js'
export { mlKemModulusHolds, postQuantum } from './post-quantum.js'
export { SEMIBLOCK } from './rfc3394.js'
export { CURVES, curvesOf, ED_ALGORITHMS, edCurveOf } from './curves.js'
export { KAT_NAMES, runKats, SHARED_KAT_NAMES, type KatResult } from './kats.js'
export { POST_QUANTUM_KAT_NAMES, runPostQuantumKats } from './pq-kats.js'
export { chooseEngine, type ChooseEngineOptions, type EngineChoice } from './choose-engine.js'
