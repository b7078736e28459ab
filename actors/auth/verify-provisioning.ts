import { X509Certificate, createPublicKey } from 'node:crypto'
import {
  attestationKeyHash,
  parseDerCertificate,
  parseGenuine,
  type ProvisioningRecord,
  verifyGenuine,
} from '../../hal/index.js'

export interface ProvisioningContext {
  /** The enclave's attestation key, SPKI DER. */
  attestationPublicKey: Uint8Array
  /** The factory CA certificate the enclave trusts, DER. */
  factoryRoot: Uint8Array
  genuineId: string
  devid: string
  /** Device time in ms; leave it out while the clock is not set, and the validity period goes unchecked. */
  now?: number
}

export type ProvisioningProblemCode = 'malformed' | 'key_mismatch' | 'bad_signature' | 'bad_genuine'

export type ProvisioningVerdict =
  { ok: true } | { ok: false; status: 400 | 406; code: ProvisioningProblemCode; message: string }

/**
 * Checks the factory's answer to an attestation request (POST provisioning): `crt` is a DER
 * certificate of exactly this enclave's attestation key, issued by the factory root and valid
 * now; `genuine` is the factory's statement (hal/x509/genuine-statement.ts, kind factory) about
 * this devid, genuineId and key, signed by the factory root. Malformed → 400, the rest → 406.
 */
export function verifyProvisioning(
  { crt, genuine }: ProvisioningRecord,
  context: ProvisioningContext,
): ProvisioningVerdict {
  const cert = parseDerCertificate(crt)
  if (!cert) return refuse('malformed', '`crt` is not a DER X.509 certificate')
  const statement = parseGenuine(genuine)
  if (!statement) return refuse('malformed', '`genuine` is not an attestation statement')
  const attestationKey = createPublicKey({
    key: Buffer.from(context.attestationPublicKey),
    format: 'der',
    type: 'spki',
  })
  if (!cert.publicKey.equals(attestationKey))
    return refuse('key_mismatch', "the certificate is not for this enclave's attestation key")
  const root = new X509Certificate(Buffer.from(context.factoryRoot))
  if (!cert.checkIssued(root) || !cert.verify(root.publicKey))
    return refuse('bad_signature', 'the certificate is not issued by the factory root')
  const { now } = context
  if (now !== undefined && (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo))) {
    return refuse('bad_signature', `the certificate is valid from ${cert.validFrom} to ${cert.validTo} only`)
  }
  const aboutThisEnclave =
    statement.kind === 'factory' &&
    statement.devid === context.devid &&
    statement.genuineId === context.genuineId &&
    Buffer.from(statement.keyHash).equals(attestationKeyHash(context.attestationPublicKey))
  if (!aboutThisEnclave) return refuse('bad_genuine', "`genuine` is not the factory's statement about this enclave")
  if (!verifyGenuine(statement, root.publicKey))
    return refuse('bad_genuine', '`genuine` is not signed by the factory root')
  return { ok: true }
}

function refuse(code: ProvisioningProblemCode, message: string): ProvisioningVerdict {
  return { ok: false, status: code === 'malformed' ? 400 : 406, code, message }
}
