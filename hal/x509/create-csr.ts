import type { Extension } from '@peculiar/x509'
import type { KeyObject } from 'node:crypto'
import { ecdsaKeyPair } from './ecdsa-key-pair.js'

/**
 * @peculiar/x509 with its ASN.1 schemas, loaded at the first CSR: it was about 0.19 s of every
 * boot's module loading, for a request a device makes rarely.
 */
async function x509(): Promise<typeof import('@peculiar/x509')> {
  await import('reflect-metadata')
  return import('@peculiar/x509')
}

export interface CsrRequest {
  /** A P-256 private key: the CSR certifies its public half and is signed by it. */
  privateKey: KeyObject
  commonName: string
  dnsNames?: string[]
}

/** A DER PKCS#10 certification request, ECDSA with SHA-256. */
export async function createCsr({ privateKey, commonName, dnsNames = [] }: CsrRequest): Promise<Uint8Array> {
  const { Pkcs10CertificateRequestGenerator, SubjectAlternativeNameExtension } = await x509()
  const extensions: Extension[] = dnsNames.length
    ? [new SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: 'dns' as const, value })))]
    : []
  const csr = await Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [commonName] }],
    keys: await ecdsaKeyPair(privateKey),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions,
  })
  return new Uint8Array(csr.rawData)
}
