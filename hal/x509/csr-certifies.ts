import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { bitString, objectIdentifier, sequence } from './der.js'
import { certificationRequestInfo, ECDSA_WITH_SHA256 } from './create-csr.js'

/**
 * Whether `csr` is a request createCsr would make for this key and common name: the same signed
 * part byte for byte, and a signature by the key over it. A stored request is used only so.
 */
export function csrCertifies(csr: Uint8Array, privateKey: KeyObject, commonName: string): boolean {
  const info = certificationRequestInfo({ privateKey, commonName })
  const algorithm = sequence(objectIdentifier(ECDSA_WITH_SHA256))
  const start = contentStart(csr, 0)
  const signatureAt = start === undefined ? undefined : start + info.length + algorithm.length
  const valueAt = signatureAt === undefined ? undefined : contentStart(csr, signatureAt)
  if (valueAt === undefined || csr[signatureAt!] !== 0x03) return false
  // After the BIT STRING's unused-bits byte: the DER ECDSA signature.
  const signature = csr.subarray(valueAt + 1)
  if (!Buffer.from(sequence(info, algorithm, bitString(signature))).equals(csr)) return false
  return verify('sha256', info, createPublicKey(privateKey), signature)
}

/** Where the content of the DER element at `at` starts; undefined past the end. */
function contentStart(der: Uint8Array, at: number): number | undefined {
  const length = der[at + 1]
  if (length === undefined) return undefined
  return at + 2 + (length < 0x80 ? 0 : length & 0x7f)
}
