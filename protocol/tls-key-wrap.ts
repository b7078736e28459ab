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

/** A fresh ephemeral key's public half, an IV, and the transport key it agrees with `eid` (wiped after use). */
function transportFor(eid: Uint8Array): { emp: Uint8Array; iv: Uint8Array; key: Uint8Array } {
  const ephemeral = x25519.utils.randomSecretKey()
  const key = tlsTransportKey(x25519.getSharedSecret(ephemeral, eid))
  const emp = x25519.getPublicKey(ephemeral)
  ephemeral.fill(0)
  return { emp, iv: randomBytes(16), key }
}

/**
 * The PKCS#8 DER `keyPkcs8` under AES-256-CBC keyed with SHA-256(X25519(a fresh ephemeral key,
 * `eid`)); the device's POST config `tls` takes `emp` and `"<b64 IV>.<b64 ciphertext>"`.
 */
export function wrapTlsKeyBytes(keyPkcs8: Uint8Array, eid: Uint8Array): WrappedTlsKey {
  const { emp, iv, key } = transportFor(eid)
  const ciphertext = cbc(key, iv).encrypt(keyPkcs8)
  key.fill(0)
  return { emp, iv, ciphertext }
}

/**
 * The same wrap with the platform's WebCrypto AES-256-CBC (PKCS#7 padding, as noble's): a page that uses only this
 * one ships no AES of its own.
 */
export async function wrapTlsKeyBytesWebCrypto(keyPkcs8: Uint8Array, eid: Uint8Array): Promise<WrappedTlsKey> {
  const { emp, iv, key } = transportFor(eid)
  try {
    const aes = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, 'AES-CBC', false, ['encrypt'])
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-CBC', iv: iv as Uint8Array<ArrayBuffer> },
      aes,
      keyPkcs8 as Uint8Array<ArrayBuffer>,
    )
    return { emp, iv, ciphertext: new Uint8Array(sealed) }
  } finally {
    key.fill(0)
  }
}
