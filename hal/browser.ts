// hal/'s face free of node: PEM, as the device writes its CSR and reads a TLS chain.
export { fromPem, toPem } from './x509/pem.js'
