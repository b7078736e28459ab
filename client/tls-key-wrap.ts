// The client side of `tls.key` (docs/api.md "Configuration rules"), in a page or in Node.
import { toBase64 } from './base64.js'
import { wrapTlsKeyBytes, wrapTlsKeyBytesWebCrypto, type WrappedTlsKey } from '../protocol/browser.js'

/**
 * `emp` and `key` of POST config `tls`: the PKCS#8 DER `keyPkcs8` under AES-256-CBC keyed with
 * SHA-256(X25519(an ephemeral key, `eid`)), as `"<b64 IV>.<b64 ciphertext>"`.
 */
export function wrapTlsKey(keyPkcs8: Uint8Array, eid: Uint8Array): { emp: string; key: string } {
  return fields(wrapTlsKeyBytes(keyPkcs8, eid))
}

/** As `wrapTlsKey`, with the platform's WebCrypto for the AES (the management app's: it ships no AES then). */
export async function wrapTlsKeyWebCrypto(
  keyPkcs8: Uint8Array,
  eid: Uint8Array,
): Promise<{ emp: string; key: string }> {
  return fields(await wrapTlsKeyBytesWebCrypto(keyPkcs8, eid))
}

function fields({ emp, iv, ciphertext }: WrappedTlsKey): { emp: string; key: string } {
  return { emp: toBase64(emp), key: `${toBase64(iv)}.${toBase64(ciphertext)}` }
}
