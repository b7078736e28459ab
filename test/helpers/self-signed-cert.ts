import { execFileSync } from 'node:child_process'

/** Writes a one-day self-signed P-256 certificate for `/CN=<commonName>` and its unencrypted key (PEM). */
export function writeSelfSignedCert(commonName: string, certFile: string, keyFile: string): void {
  const subject = `/CN=${commonName}`
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1']
  execFileSync('openssl', [...args, '-subj', subject, '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' })
}
