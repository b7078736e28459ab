// A device's attestation (GET /api/system/config/attestation, P) checked in the page against the factory CA the
// app ships: the checks the device makes of its provisioning (actors/auth/verify-provisioning.ts), made again by
// the one who is about to trust it. Web Crypto verifies the signatures: the wizard runs only in a secure context
// (HTTPS, or loopback), where it always exists.
import { bytesToHex } from '@noble/hashes/utils.js'
import { fromBase64 } from '../../client/browser.js'
import {
  CertificateFormatError,
  ecdsaSignatureBytes,
  parseGenuine,
  readCertificate,
  type CertificateFields,
} from '../../hal/browser.js'
import { sameBytes, type FactoryCa } from './factory-ca.js'

/** The device's answer as it came: base64 fields. */
export interface AttestationAnswer {
  crt?: string
  genuine?: string
  csr?: string
}

export type AttestationVerdict =
  /** Certified by the factory CA: its statement names this device and this key. */
  | { kind: 'genuine'; genuineId: string; validTo: Date }
  /** Only the device's own statement about itself: no factory has vouched for it. */
  | { kind: 'unprovisioned'; genuineId: string }
  /** `check` says, in words, the first check that failed. */
  | { kind: 'failed'; check: string }

const EC_KEY = '1.2.840.10045.2.1'
const RSA_KEY = '1.2.840.113549.1.1.1'
/** Curves a factory root may be on: Web Crypto's name and the size of r and s. */
const CURVES: Record<string, [name: string, size: number]> = {
  '1.2.840.10045.3.1.7': ['P-256', 32],
  '1.3.132.0.34': ['P-384', 48],
  '1.3.132.0.35': ['P-521', 66],
}
/** Signature algorithms a factory may sign certificates with: the key they need and the hash. */
const SIGNATURES: Record<string, [key: string, hash: string]> = {
  '1.2.840.10045.4.3.2': [EC_KEY, 'SHA-256'],
  '1.2.840.10045.4.3.3': [EC_KEY, 'SHA-384'],
  '1.2.840.10045.4.3.4': [EC_KEY, 'SHA-512'],
  '1.2.840.113549.1.1.11': [RSA_KEY, 'SHA-256'],
  '1.2.840.113549.1.1.12': [RSA_KEY, 'SHA-384'],
  '1.2.840.113549.1.1.13': [RSA_KEY, 'SHA-512'],
}

const failed = (check: string): AttestationVerdict => ({ kind: 'failed', check })
const buffer = (bytes: Uint8Array) => new Uint8Array(bytes)

/**
 * Whether `signer`'s key signed `data` with `signature`: ECDSA as the DER of a certificate (`der`) or as r || s
 * (the `genuine` statement's), or RSA PKCS#1 v1.5. An algorithm the key cannot make verifies nothing.
 */
async function signedBy(
  signer: CertificateFields,
  [keyType, hash]: [string, string],
  data: Uint8Array,
  signature: Uint8Array,
  der: boolean,
): Promise<boolean> {
  if (signer.keyAlgorithm !== keyType) return false
  const { subtle } = crypto
  if (keyType === RSA_KEY) {
    const key = await subtle.importKey('spki', buffer(signer.spki), { name: 'RSASSA-PKCS1-v1_5', hash }, false, [
      'verify',
    ])
    return subtle.verify('RSASSA-PKCS1-v1_5', key, buffer(signature), buffer(data))
  }
  const curve = CURVES[signer.keyCurve ?? '']
  if (!curve) return false
  const raw = der ? ecdsaSignatureBytes(signature, curve[1]) : signature
  if (!raw || raw.length !== 2 * curve[1]) return false
  const key = await subtle.importKey('spki', buffer(signer.spki), { name: 'ECDSA', namedCurve: curve[0] }, false, [
    'verify',
  ])
  return subtle.verify({ name: 'ECDSA', hash }, key, buffer(raw), buffer(data))
}

function bytesOf(field: string | undefined): Uint8Array | undefined {
  try {
    return field === undefined ? undefined : fromBase64(field)
  } catch {
    return undefined
  }
}

/** The device's statement about itself, before provisioning: it names this device, and nothing vouches for it. */
function selfStatement(genuine: Uint8Array | undefined, devid: string): AttestationVerdict {
  const statement = genuine && parseGenuine(genuine)
  if (!statement) return failed("the device's statement about itself cannot be read")
  if (statement.kind !== 'device')
    return failed('the device sent a factory statement without the certificate that goes with it')
  if (statement.devid !== devid)
    return failed(`the device's statement names device ${statement.devid}, not this one (${devid})`)
  return { kind: 'unprovisioned', genuineId: statement.genuineId }
}

/**
 * The verdict on `answer` for the device `devid` (16 hex), at `now`, against `ca`. The checks, in order: the
 * certificate is one DER certificate, issued by the CA (its issuer is the CA's subject, and the CA's key signed
 * it), valid now; the statement is the factory's, about this devid, this certificate's key and its subject's
 * serial (the genuineId), signed by the CA's key.
 */
export async function checkAttestation(
  answer: AttestationAnswer,
  devid: string,
  ca: FactoryCa,
  now: Date,
): Promise<AttestationVerdict> {
  const genuine = bytesOf(answer.genuine)
  if (answer.crt === undefined) return selfStatement(genuine, devid)
  const der = bytesOf(answer.crt)
  let crt: CertificateFields
  try {
    crt = readCertificate(der ?? new Uint8Array())
  } catch (error) {
    if (error instanceof CertificateFormatError)
      return failed(`the attestation certificate cannot be read (${error.message})`)
    throw error
  }
  const root = ca.certificate
  if (!sameBytes(crt.issuer.der, root.subject.der))
    return failed(`the attestation certificate was issued by "${crt.issuer.text}", not by the factory CA`)
  const algorithm = SIGNATURES[crt.signatureAlgorithm]
  if (!algorithm || !(await signedBy(root, algorithm, crt.signed, crt.signature, true)))
    return failed("the attestation certificate's signature does not verify with the factory CA's key")
  if (now < crt.notBefore || now > crt.notAfter)
    return failed(
      `the attestation certificate is valid from ${crt.notBefore.toISOString()} to ${crt.notAfter.toISOString()} only`,
    )
  const statement = genuine && parseGenuine(genuine)
  if (!statement) return failed("the factory's statement cannot be read")
  if (statement.kind !== 'factory') return failed("the statement is the device's own, not the factory's")
  if (statement.devid !== devid) return failed(`the statement names device ${statement.devid}, not this one (${devid})`)
  const keyHash = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer(crt.spki)))
  if (!sameBytes(statement.keyHash, keyHash))
    return failed(
      `the statement names another attestation key (SHA-256 ${bytesToHex(statement.keyHash)}) than the certificate's`,
    )
  if (statement.genuineId !== crt.subject.commonName)
    return failed(
      `the statement names enclave ${statement.genuineId}, the certificate ${crt.subject.commonName ?? 'none'}`,
    )
  const genuineAlgorithm: [string, string] = [root.keyAlgorithm, 'SHA-256']
  if (!(await signedBy(root, genuineAlgorithm, statement.signed, statement.signature, false)))
    return failed("the factory's statement is not signed by the factory CA's key")
  return { kind: 'genuine', genuineId: statement.genuineId, validTo: crt.notAfter }
}
