// The client library: what a login script or a test needs to authenticate to a device.
export { EJWT_HEADER, buildEjwt, passphraseChangeHmac, type EjwtInput } from './ejwt-builder.js'
export {
  PBKDF2_ITERATIONS,
  PassphraseKeyCache,
  derivePassphraseKey,
  derivePassphraseKeyAsync,
  type PassphraseKey,
  type PassphraseKeyCacheOptions,
} from './passphrase-key.js'
