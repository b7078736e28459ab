import { createPublicKey, sign, type KeyObject } from 'node:crypto'
import {
  bitString,
  explicit,
  integer,
  isPrintable,
  objectIdentifier,
  octetString,
  printableString,
  sequence,
  set,
  tlv,
  utf8String,
} from './der.js'

const COMMON_NAME = '2.5.4.3'
const EXTENSION_REQUEST = '1.2.840.113549.1.9.14'
const SUBJECT_ALT_NAME = '2.5.29.17'
export const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2'

export interface CsrRequest {
  /** A P-256 private key: the CSR certifies its public half and is signed by it. */
  privateKey: KeyObject
  commonName: string
  dnsNames?: string[]
}

/**
 * A DER PKCS#10 certification request (RFC 2986), ECDSA with SHA-256, written with node:crypto
 * alone: an X.509 library and its ASN.1 schemas took about 0.2 s to load, longer than a device
 * needs for the request itself. The subject is encoded as X.509 libraries do (PrintableString
 * when the name allows it, UTF8String otherwise).
 */
export function createCsr(request: CsrRequest): Uint8Array {
  const info = certificationRequestInfo(request)
  const signature = sign('sha256', info, request.privateKey)
  return sequence(info, sequence(objectIdentifier(ECDSA_WITH_SHA256)), bitString(signature))
}

/** The part of the request its signature covers: one per key, name and DNS names. */
export function certificationRequestInfo({ privateKey, commonName, dnsNames = [] }: CsrRequest): Uint8Array {
  const name = sequence(
    set(
      sequence(
        objectIdentifier(COMMON_NAME),
        isPrintable(commonName) ? printableString(commonName) : utf8String(commonName),
      ),
    ),
  )
  const spki = new Uint8Array(createPublicKey(privateKey).export({ type: 'spki', format: 'der' }))
  const attributes = dnsNames.length
    ? sequence(objectIdentifier(EXTENSION_REQUEST), set(sequence(subjectAltName(dnsNames))))
    : new Uint8Array(0)
  return sequence(integer(Uint8Array.of(0)), name, spki, explicit(0, attributes))
}

function subjectAltName(dnsNames: string[]): Uint8Array {
  const names = sequence(...dnsNames.map((dns) => tlv(0x82, new TextEncoder().encode(dns))))
  return sequence(objectIdentifier(SUBJECT_ALT_NAME), octetString(names))
}
