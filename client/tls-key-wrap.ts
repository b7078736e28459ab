// The client side of `tls.key` (docs/api.md "Configuration rules"), in a page or in Node: a
// private key leaves its owner only wrapped for the device's identity key.
import { cbc } from '@noble/ciphers/aes.js'
import { x25519 } from '@noble/curves/ed25519.js'
import { randomBytes } from '@noble/hashes/utils.js'
import { toBase64 } from './base64.js'
import { tlsTransportKey } from '../protocol/browser.js'

/**
 * `emp` and `key` of POST config `tls`: the PKCS#8 DER `keyPkcs8` under AES-256-CBC keyed with
 * SHA-256(X25519(an ephemeral key, `eid`)), as `"<b64 IV>.<b64 ciphertext>"`.
 */
export function wrapTlsKey(keyPkcs8: Uint8Array, eid: Uint8Array): { emp: string; key: string } {
  const ephemeral = x25519.utils.randomSecretKey()
  const iv = randomBytes(16)
  const transportKey = tlsTransportKey(x25519.getSharedSecret(ephemeral, eid))
  const ciphertext = cbc(transportKey, iv).encrypt(keyPkcs8)
  const emp = x25519.getPublicKey(ephemeral)
  ephemeral.fill(0)
  transportKey.fill(0)
  return { emp: toBase64(emp), key: `${toBase64(iv)}.${toBase64(ciphertext)}` }
}
