import 'reflect-metadata'
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequest,
  SubjectKeyIdentifierExtension,
  X509Certificate,
  X509CertificateGenerator,
} from '@peculiar/x509'
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto'
import {
  attestationKeyHash,
  type AttestationRequest,
  ecdsaKeyPair,
  parseGenuine,
  type ProvisioningRecord,
  signGenuine,
  verifyGenuine,
} from '../hal/index.js'

export interface FactoryCa {
  /** ECDSA P-256 private key of the CA. */
  key: KeyObject
  /** The CA certificate, DER. */
  cert: Uint8Array
}

/** The factory's answer, and whom it is for. */
export interface SignedAttestation extends ProvisioningRecord {
  genuineId: string
  devid: string
}

/** The device's attestation request does not check out: nothing was signed. */
export class AttestationRejectedError extends Error {
  override readonly name = 'AttestationRejectedError'
}

/**
 * The factory's side of provisioning: checks the device's CSR (self-signed, P-256) and its
 * self-statement (signed by the same key, naming the CSR's CN as genuineId), then issues the
 * device certificate (valid from `now` until the CA expires) and the factory statement.
 */
export async function signAttestation(
  request: AttestationRequest,
  ca: FactoryCa,
  now = Date.now(),
): Promise<SignedAttestation> {
  const csr = parseCsr(request.csr)
  if (!(await csr.verify())) throw new AttestationRejectedError('the CSR signature does not verify')
  const spki = new Uint8Array(csr.publicKey.rawData)
  const publicKey = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' })
  if (publicKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new AttestationRejectedError('the attestation key is not ECDSA P-256')
  const statement = parseGenuine(request.genuine)
  if (statement?.kind !== 'device') throw new AttestationRejectedError('`genuine` is not a device self-statement')
  if (!verifyGenuine(statement, publicKey))
    throw new AttestationRejectedError("`genuine` is not signed by the CSR's key")
  if (!Buffer.from(statement.keyHash).equals(attestationKeyHash(spki)))
    throw new AttestationRejectedError('`genuine` names another key than the CSR')
  if (csr.subjectName.getField('CN')[0] !== statement.genuineId)
    throw new AttestationRejectedError('the CSR subject is not CN=<genuineId>')

  const caCert = new X509Certificate(ca.cert)
  const caKeyId = caCert.getExtension(SubjectKeyIdentifierExtension)?.keyId
  const crt = await X509CertificateGenerator.create({
    serialNumber: positiveSerial(),
    subject: csr.subjectName,
    issuer: caCert.subjectName,
    notBefore: new Date(Math.floor(now / 1000) * 1000),
    notAfter: caCert.notAfter,
    publicKey: csr.publicKey,
    signingKey: (await ecdsaKeyPair(ca.key)).privateKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      new BasicConstraintsExtension(false, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
      await SubjectKeyIdentifierExtension.create(csr.publicKey),
      ...(caKeyId ? [new AuthorityKeyIdentifierExtension(caKeyId)] : []),
    ],
  })
  const { devid, genuineId, keyHash } = statement
  const genuine = signGenuine({ kind: 'factory', devid, genuineId, keyHash }, ca.key)
  return { crt: new Uint8Array(crt.rawData), genuine, genuineId, devid }
}

// 16 random bytes with the sign bit clear and the next one set: positive, minimal, full length.
function positiveSerial(): string {
  const bytes = randomBytes(16)
  bytes[0] = ((bytes[0] as number) & 0x7f) | 0x40
  return bytes.toString('hex')
}

function parseCsr(der: Uint8Array): Pkcs10CertificateRequest {
  try {
    return new Pkcs10CertificateRequest(der)
  } catch {
    throw new AttestationRejectedError('`csr` is not a DER PKCS#10 request')
  }
}
