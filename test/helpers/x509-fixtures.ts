// Test certificates made with @peculiar/x509: CAs, intermediates and leaves for any public key.
import 'reflect-metadata'
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509Certificate,
  X509CertificateGenerator,
} from '@peculiar/x509'
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { ecdsaKeyPair } from '../../hal/x509/ecdsa-key-pair.js'

export interface TestCa {
  key: KeyObject
  /** DER */
  cert: Uint8Array
}

export interface Validity {
  notBefore?: Date
  notAfter?: Date
}

const DEFAULT_VALIDITY = { notBefore: new Date('2025-01-01T00:00:00Z'), notAfter: new Date('2045-01-01T00:00:00Z') }

export async function makeCa(name: string, validity: Validity = {}): Promise<TestCa> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const keys = await ecdsaKeyPair(privateKey)
  const cert = await X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}`,
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    ...DEFAULT_VALIDITY,
    ...validity,
    extensions: [
      new BasicConstraintsExtension(true, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign, true),
      await SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return { key: privateKey, cert: new Uint8Array(cert.rawData) }
}

/** A certificate for `key` (either half of a pair) issued by `issuer`. */
export async function issue(
  issuer: TestCa,
  key: KeyObject,
  name: string,
  options: Validity & { ca?: boolean; altNames?: { type: 'ip' | 'dns'; value: string }[] } = {},
): Promise<Uint8Array> {
  const spki = (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' })
  const issuerCert = new X509Certificate(issuer.cert)
  const keyId = issuerCert.getExtension(SubjectKeyIdentifierExtension)?.keyId
  const cert = await X509CertificateGenerator.create({
    subject: `CN=${name}`,
    issuer: issuerCert.subjectName,
    ...DEFAULT_VALIDITY,
    ...options,
    publicKey: spki,
    signingKey: (await ecdsaKeyPair(issuer.key)).privateKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      new BasicConstraintsExtension(options.ca ?? false, undefined, true),
      await SubjectKeyIdentifierExtension.create(spki),
      ...(keyId ? [new AuthorityKeyIdentifierExtension(keyId)] : []),
      ...(options.altNames ? [new SubjectAlternativeNameExtension(options.altNames)] : []),
    ],
  })
  return new Uint8Array(cert.rawData)
}

/** An intermediate CA under `issuer`. */
export async function makeIntermediate(issuer: TestCa, name: string): Promise<TestCa> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return { key: privateKey, cert: await issue(issuer, privateKey, name, { ca: true }) }
}

export function pkcs8(key: KeyObject): Uint8Array {
  return new Uint8Array(key.export({ type: 'pkcs8', format: 'der' }))
}
