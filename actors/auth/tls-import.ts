import { createDecipheriv, createPrivateKey } from 'node:crypto'
import type { Enclave, TlsMaterial } from '../../hal/index.js'
import { base64Field, decodeBase64, tlsTransportKey } from '../../protocol/index.js'
import { splitDerChain } from './split-der-chain.js'

export type TlsImportCode = 'malformed' | 'undecryptable' | 'bad_chain' | 'unsupported_key' | 'key_mismatch'

export type TlsImportResult =
  { ok: true; material: TlsMaterial } | { ok: false; status: 400 | 406; code: TlsImportCode; message: string }

/**
 * Decodes and checks the `tls` object of POST config: `{crt, key?, emp?}` where `crt` is base64
 * of one or more concatenated DER certificates (leaf first) and `key` is
 * `"<b64 IV>.<b64 AES-256-CBC ciphertext>"` of a PKCS#8 private key under
 * tlsTransportKey(X25519(emp, eid)). Without `key` the chain must certify the device's own TLS
 * key, and `emp` is ignored. Malformed input → 400; a key that does not decrypt or does not
 * fit the chain → 406. On success the result is what `enclave.stageTls` will accept.
 */
export function decodeTlsImport(
  value: unknown,
  enclave: Pick<Enclave, 'identityAgree' | 'tlsProblem'>,
): TlsImportResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return malformed('`tls` must be an object {crt, key?, emp?}')
  const { crt, key, emp } = value as Record<string, unknown>
  const chainBytes = base64Field(crt)
  const certChainDer = chainBytes && splitDerChain(chainBytes)
  if (!certChainDer) return malformed('`tls.crt` must be base64 of one or more DER certificates')
  let material: TlsMaterial = { certChainDer }
  if (key !== undefined) {
    const keyPkcs8 = decryptKey(key, emp, enclave)
    if (typeof keyPkcs8 !== 'object') return keyPkcs8 === 'malformed' ? malformed(KEY_FORMAT) : undecryptable()
    material = { certChainDer, keyPkcs8 }
  }
  const problem = enclave.tlsProblem(material)
  if (!problem) return { ok: true, material }
  if (problem.code === 'bad_certificate') return malformed(problem.message)
  return { ok: false, status: 406, code: problem.code, message: problem.message }
}

const KEY_FORMAT =
  '`tls.key` must be "<base64 16-byte IV>.<base64 ciphertext>" and `tls.emp` base64 of a 32-byte X25519 public key'

function decryptKey(
  key: unknown,
  emp: unknown,
  enclave: Pick<Enclave, 'identityAgree'>,
): Uint8Array | 'malformed' | 'undecryptable' {
  const [ivText, ciphertextText, ...rest] = typeof key === 'string' ? key.split('.') : []
  const iv = ivText === undefined ? undefined : decodeBase64(ivText)
  const ciphertext = ciphertextText === undefined ? undefined : decodeBase64(ciphertextText)
  const peer = base64Field(emp)
  if (
    rest.length > 0 ||
    iv?.length !== 16 ||
    !ciphertext?.length ||
    ciphertext.length % 16 !== 0 ||
    peer?.length !== 32
  ) {
    return 'malformed'
  }
  let shared: Uint8Array
  try {
    shared = enclave.identityAgree(peer)
  } catch {
    return 'malformed'
  }
  try {
    const decipher = createDecipheriv('aes-256-cbc', tlsTransportKey(shared), iv)
    const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()])
    // A wrong transport key passes the padding check once in ~256 tries; the PKCS#8 parse catches it.
    createPrivateKey({ key: plaintext, format: 'der', type: 'pkcs8' })
    return new Uint8Array(plaintext)
  } catch {
    return 'undecryptable'
  }
}

function malformed(message: string): TlsImportResult {
  return { ok: false, status: 400, code: 'malformed', message }
}

function undecryptable(): TlsImportResult {
  return {
    ok: false,
    status: 406,
    code: 'undecryptable',
    message: "`tls.key` does not decrypt to a PKCS#8 private key under this device's transport key",
  }
}
