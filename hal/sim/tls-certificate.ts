import { generateKeyPairSync, sign } from 'node:crypto'
import { toPem } from '../x509/pem.js'
import {
  bitString,
  booleanTrue,
  explicit,
  integer,
  objectIdentifier,
  octetString,
  sequence,
  set,
  time,
  tlv,
  utf8String,
} from '../x509/der.js'

const VALIDITY_YEARS = 20
const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2'

export interface TlsCertificatePem {
  certPem: string
  keyPem: string
}

/** The device's self-signed TLS server certificate: ECDSA P-256 / SHA-256, CN=hem-<devid>, for localhost. */
export function createTlsCertificate(devid: string, serial: Uint8Array, now: number): TlsCertificatePem {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  // DER time has whole seconds only.
  const notBefore = new Date(Math.floor(now / 1000) * 1000)
  const notAfter = new Date(notBefore)
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALIDITY_YEARS)
  const name = sequence(set(sequence(objectIdentifier('2.5.4.3'), utf8String(`hem-${devid}`))))
  const signatureAlgorithm = sequence(objectIdentifier(ECDSA_WITH_SHA256))
  const tbsCertificate = sequence(
    explicit(0, integer(Uint8Array.of(2))),
    integer(positiveSerial(serial)),
    signatureAlgorithm,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    new Uint8Array(publicKey.export({ type: 'spki', format: 'der' })),
    explicit(3, sequence(...serverExtensions())),
  )
  const signature = sign('sha256', tbsCertificate, privateKey)
  const certificate = sequence(tbsCertificate, signatureAlgorithm, bitString(signature))
  return {
    certPem: toPem('CERTIFICATE', certificate),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  }
}

function serverExtensions(): Uint8Array[] {
  const extension = (oid: string, critical: boolean, value: Uint8Array) =>
    critical
      ? sequence(objectIdentifier(oid), booleanTrue(), octetString(value))
      : sequence(objectIdentifier(oid), octetString(value))
  return [
    extension('2.5.29.19', true, sequence()), // basicConstraints: not a CA
    extension('2.5.29.15', true, bitString(Uint8Array.of(0x80), 7)), // keyUsage: digitalSignature
    extension('2.5.29.37', false, sequence(objectIdentifier('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
    extension(
      '2.5.29.17', // subjectAltName: dNSName [2], iPAddress [7]
      false,
      sequence(tlv(0x82, new TextEncoder().encode('localhost')), tlv(0x87, Uint8Array.of(127, 0, 0, 1))),
    ),
  ]
}

// A DER INTEGER serial must be positive and minimally encoded: clear the sign bit, set the next one.
function positiveSerial(serial: Uint8Array): Uint8Array {
  const bytes = Uint8Array.from(serial)
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40
  return bytes
}
