// What a certificate import can be refused for, in the owner's words: what was wrong with the files
// chosen and what to do. The page's own checks and each refusal of the device's import route
// (actors/auth/tls-import.ts, hal/x509/tls-chain-problem.ts) are told here, once.
import type { DeviceRefusedError } from '../../../client/browser.js'

const CONVERT_KEY = 'convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out key.pem'

export const TLS_IMPORT_WORDS = {
  noChain: 'Choose the certificate file, the one your CA sent (.crt, .pem or .cer).',
  chainNotCertificate: 'The certificate file is not PEM or DER: choose the .crt/.pem file your CA sent.',
  keyNotPkcs8:
    'The key file is not an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----): choose the key you made ' +
    `the certificate request with, or ${CONVERT_KEY}.`,
  tooLarge: (size: number, limit: number) =>
    `The files are too large for one request (${size} bytes, at most ${limit}): leave the root certificate ` +
    'out of the certificate file, the device does not need it.',
} as const

/** Which file a refusal is about, and what to tell the owner. */
export interface TlsImportRefusal {
  readonly file: 'chain' | 'key'
  readonly words: string
}

/** A certificate's number as the owner counts them in the file: the first is 1. */
const nth = (index: string) => `certificate ${Number(index) + 1}`

/**
 * The device's refusal of an import in the owner's words; `withKey` says whether a key was sent.
 * Undefined for a refusal that is not the import's (the owner's session, the device's state).
 */
export function tlsRefusalWords(error: DeviceRefusedError, withKey: boolean): TlsImportRefusal | undefined {
  const message = String((error.body as { message?: unknown } | undefined)?.message ?? '')
  if (error.status === 400) {
    if (message.startsWith('`tls.crt`') || message === 'the certificate chain is empty')
      return { file: 'chain', words: TLS_IMPORT_WORDS.chainNotCertificate }
    const notCert = /^certificate (\d+) of the chain is not a DER X\.509 certificate/.exec(message)
    if (notCert)
      return {
        file: 'chain',
        words:
          `The certificate file holds something that is not a certificate (its ${nth(notCert[1]!)}): ` +
          'choose the file of certificates only, not a key or a request.',
      }
    if (message.startsWith('`tls.key`') || message.startsWith('`tls`'))
      return {
        file: 'key',
        words: 'The page could not wrap the key for this device: reload the page and import again.',
      }
    return undefined
  }
  if (error.status !== 406) return undefined
  switch (error.code) {
    case 'undecryptable':
      return { file: 'key', words: TLS_IMPORT_WORDS.keyNotPkcs8 }
    case 'bad_chain': {
      const [, child = '0', parent = '1'] =
        /^certificate (\d+) of the chain is not issued by certificate (\d+)/.exec(message) ?? []
      return {
        file: 'chain',
        words:
          `In the certificate file, ${nth(child)} is not issued by ${nth(parent)}: put the device's certificate ` +
          'first, then the CA certificate that issued it, then that one’s issuer, and leave out any other.',
      }
    }
    case 'unsupported_key':
      return {
        file: 'key',
        words:
          'The device serves only ECDSA P-256 keys or RSA keys of 2048 bits or more, and this key is neither: ' +
          'make a key of one of these kinds and have a certificate issued for it, or use the device’s own key ' +
          '(Make a CSR).',
      }
    case 'key_mismatch':
      return withKey
        ? {
            file: 'key',
            words:
              'The key file is not the key this certificate is for: choose the key that belongs to the certificate.',
          }
        : {
            file: 'chain',
            words:
              'This certificate is not for the device’s own key: choose the key it was issued for too, or have a ' +
              'certificate issued for the device’s request (Make a CSR).',
          }
    default:
      return undefined
  }
}
