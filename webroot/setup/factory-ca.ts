// The factory CA this app was built with (buildWebroot's `factoryCa`, esbuild `define`): what the set-up
// wizard checks a device's attestation against. Built in, never asked of the device, which cannot then
// choose who vouches for it.
import { DEV_FACTORY_ROOT_PEM, fromPem, readCertificate, type CertificateFields } from '../../hal/browser.js'

declare const HEM_FACTORY_CA: string

export interface FactoryCa {
  certificate: CertificateFields
  /**
   * It holds the published development key (deploy/keys/): anyone can sign with it. Known by its key, as hemd
   * knows it, so a certificate re-issued from that key is the development CA still.
   */
  development: boolean
}

/** The CA, read once; a build without a readable one throws (the wizard says so). */
export function factoryCa(): FactoryCa {
  const certificate = readCertificate(fromPem(HEM_FACTORY_CA, 'CERTIFICATE')[0] ?? new Uint8Array())
  const dev = readCertificate(fromPem(DEV_FACTORY_ROOT_PEM, 'CERTIFICATE')[0]!)
  return { certificate, development: sameBytes(certificate.spki, dev.spki) }
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i])
}
