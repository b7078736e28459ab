// The sending side of `tls.key` (docs/api.md "Configuration rules"), in a page, in Node or in the
// cloud's domain service: a private key leaves its owner only wrapped for the device's identity key.
import { cbc } from '@noble/ciphers/aes.js'
import { x25519 } from '@noble/curves/ed25519.js'
import { randomBytes } from '@noble/hashes/utils.js'
import { tlsTransportKey } from './tls-transport-key.js'

/** The parts of a wrapped key, raw: each caller writes them in its own base64. */
export interface WrappedTlsKey {
  /** The ephemeral X25519 public key. */
  emp: Uint8Array
  iv: Uint8Array
  ciphertext: Uint8Array
}

/**
 * The PKCS#8 DER `keyPkcs8` under AES-256-CBC keyed with SHA-256(X25519(a fresh ephemeral key,
 * `eid`)); the device's POST config `tls` takes `emp` and `"<b64 IV>.<b64 ciphertext>"`.
 */
export function wrapTlsKeyBytes(keyPkcs8: Uint8Array, eid: Uint8Array): WrappedTlsKey {
  const ephemeral = x25519.utils.randomSecretKey()
  const iv = randomBytes(16)
  const transportKey = tlsTransportKey(x25519.getSharedSecret(ephemeral, eid))
  const ciphertext = cbc(transportKey, iv).encrypt(keyPkcs8)
  const emp = x25519.getPublicKey(ephemeral)
  ephemeral.fill(0)
  transportKey.fill(0)
  return { emp, iv, ciphertext }
}
