// hal/'s face free of node: PEM, as the device writes its CSR and reads a TLS chain; the curves'
// table and the DER encoder, for the app's public keys as PEM.
export { CURVES } from './crypto/curves.js'
export { subjectPublicKeyInfo } from './x509/der.js'
export { fromPem, toPem } from './x509/pem.js'
