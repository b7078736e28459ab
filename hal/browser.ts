// hal/'s face free of node: PEM, as the device writes its CSR and reads a TLS chain; the curves'
// table and the DER encoder, for the app's public keys as PEM; a certificate's fields, the `genuine`
// statement's layout and the development factory CA, for the set-up wizard's attestation check and the
// TLS certificate shown in Settings.
export { CURVES } from './crypto/curves.js'
export { DEV_FACTORY_ROOT_PEM } from './sim/factory-ca-dev.js'
export {
  CertificateFormatError,
  ecdsaSignatureBytes,
  readCertificate,
  type CertificateFields,
  type DistinguishedName,
} from './x509/certificate-reader.js'
export { colonHex } from './x509/colon-hex.js'
export { subjectPublicKeyInfo } from './x509/der.js'
export { parseGenuine, type GenuineKind, type GenuineStatement } from './x509/genuine-format.js'
export { fromPem, toPem } from './x509/pem.js'
