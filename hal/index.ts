// The public face of the HAL: open the device, and the types and errors that describe it.
export type * from './types.js'
export {
  AlreadyProvisionedError,
  DiskLockedError,
  DiskNotFormattedError,
  DiskReadOnlyError,
  EntropyError,
  FormatCancelledError,
  HalCorruptError,
  HalError,
  HalLockedError,
  HalUnsupportedError,
  HalVariantMismatchError,
  isStorageFull,
  JournalAnchorError,
  StorageFullError,
  TlsMaterialError,
  UnsealError,
} from './errors.js'
export { EntropyHealthError } from './health-tested-entropy.js'
// Opening the device is opening the simulator: it is the only implementation so far.
export { openSimHal as openHal } from './sim/open-sim-hal.js'
export { ed25519PublicKey } from './crypto/ed25519-key.js'
export {
  AuthenticationError,
  chooseEngine,
  CipherError,
  compressedSecPoint,
  CryptoInputError,
  CURVES,
  curvesOf,
  ED_ALGORITHMS,
  edCurveOf,
  eddsaPublicKeyValid,
  mlKemModulusHolds,
  montgomeryPublicKeyValid,
  nativeEngine,
  nobleEngine,
  postQuantum,
  runKats,
  runPostQuantumKats,
  SEMIBLOCK,
  type ChooseEngineOptions,
  type CryptoEngine,
  type Curve,
  type Digest,
  type EcdsaDigest,
  type EdAlgorithm,
  type EdCurve,
  type MlDsaVariant,
  type MlKemVariant,
  type PostQuantum,
  type RandomSource,
  type SecCurve,
} from './crypto/index.js'
export { startupTest } from './health-tested-entropy.js'
export {
  decodeTrustAnchors,
  developmentAnchors,
  developmentTrust,
  encodeTrustAnchors,
  readTrustAnchor,
  TRUST_ANCHOR_FLAGS,
  TrustAnchorError,
  trustFingerprint,
  type TrustAnchorName,
  type TrustAnchors,
} from './trust-anchors.js'
export { abandonTrial, chooseBoot, commitTrial, slotDir } from './sim/boot-slots.js'
export { DataDirLock } from './sim/data-dir-lock.js'
export { prepareDataDirAccess, type DataDirAccounts, type HalAccount } from './sim/data-dir-access.js'
export { readDeviceIdentity } from './sim/device-identity.js'
export { killOrphan } from './sim/orphan-process.js'
export { createTlsCertificate } from './sim/tls-certificate.js'
export { colonHex } from './x509/colon-hex.js'
export { ecdsaKeyPair } from './x509/ecdsa-key-pair.js'
export { attestationKeyHash, parseGenuine, signGenuine, verifyGenuine } from './x509/genuine-statement.js'
export { parseDerCertificate } from './x509/parse-der-certificate.js'
export { fromPem } from './x509/pem.js'
