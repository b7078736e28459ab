// The client library: what a login script or a test needs to authenticate to a device.
export { EJWT_HEADER, buildEjwt, buildLoginEjwt, passphraseChangeHmac, type EjwtInput, type LoginChallenge } from './ejwt-builder.js'
export { PBKDF2_ITERATIONS, derivePassphraseKeyAsync, passphraseKeyFromSeed, type PassphraseKey } from './passphrase-key.js'
export { PassphraseKeyCache, derivePassphraseKey, type PassphraseKeyCacheOptions } from './passphrase-key-node.js'
