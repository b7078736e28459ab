import { X509Certificate } from 'node:crypto'

/** Exactly one DER certificate, or undefined: node would also take PEM and ignore bytes after the certificate. */
export function parseDerCertificate(der: Uint8Array): X509Certificate | undefined {
  try {
    const cert = new X509Certificate(Buffer.from(der))
    return Buffer.from(der).equals(cert.raw) ? cert : undefined
  } catch {
    return undefined
  }
}
