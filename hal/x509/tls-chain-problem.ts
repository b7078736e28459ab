import type { KeyObject, X509Certificate } from 'node:crypto'
import type { TlsProblem } from '../types.js'
import { parseDerCertificate } from './parse-der-certificate.js'

/**
 * Why the device would refuse to serve `chainDer` (leaf first, each issued by the next) with
 * the private `key`, or undefined when it would serve them. Without `key` only the chain is checked.
 */
export function tlsChainProblem(chainDer: Uint8Array[], key?: KeyObject): TlsProblem | undefined {
  if (chainDer.length === 0) return { code: 'bad_certificate', message: 'the certificate chain is empty' }
  const certs: X509Certificate[] = []
  for (const [index, der] of chainDer.entries()) {
    const cert = parseDerCertificate(der)
    if (!cert)
      return { code: 'bad_certificate', message: `certificate ${index} of the chain is not a DER X.509 certificate` }
    certs.push(cert)
  }
  for (let index = 1; index < certs.length; index++) {
    const [subject, issuer] = [certs[index - 1] as X509Certificate, certs[index] as X509Certificate]
    if (!subject.checkIssued(issuer) || !subject.verify(issuer.publicKey)) {
      return {
        code: 'bad_chain',
        message: `certificate ${index - 1} of the chain is not issued by certificate ${index}`,
      }
    }
  }
  if (!key) return undefined
  if (!isServableKey(key))
    return { code: 'unsupported_key', message: 'the TLS key must be ECDSA P-256 or RSA of 2048 bits or more' }
  if (!(certs[0] as X509Certificate).checkPrivateKey(key)) {
    return { code: 'key_mismatch', message: 'the leaf certificate does not certify the TLS key' }
  }
  return undefined
}

function isServableKey(key: KeyObject): boolean {
  const details = key.asymmetricKeyDetails
  if (key.type !== 'private') return false
  if (key.asymmetricKeyType === 'ec') return details?.namedCurve === 'prime256v1'
  return key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048
}
