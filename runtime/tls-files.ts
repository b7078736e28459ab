import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'

export class TlsFilesError extends Error {
  override readonly name = 'TlsFilesError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * Checks an operator's certificate and key before the device serves them: readable, PEM, and a pair. Answers the
 * files and the leaf's DER (the banner's fingerprint).
 */
export async function loadTlsFiles(files: {
  certFile: string
  keyFile: string
}): Promise<{ certFile: string; keyFile: string; certDer: Uint8Array }> {
  const certFile = resolve(files.certFile)
  const keyFile = resolve(files.keyFile)
  const cert = await readFile(certFile).catch((err: unknown) => {
    throw new TlsFilesError(`cannot read the TLS certificate ${certFile}`, { cause: err })
  })
  const key = await readFile(keyFile).catch((err: unknown) => {
    throw new TlsFilesError(`cannot read the TLS key ${keyFile}`, { cause: err })
  })
  let x509: X509Certificate
  try {
    x509 = new X509Certificate(cert)
  } catch (err) {
    throw new TlsFilesError(`${certFile} is not a PEM or DER X.509 certificate`, { cause: err })
  }
  let privateKey
  try {
    privateKey = createPrivateKey(key)
  } catch {
    // The cause would carry parser details of the key file; keep only the verdict.
    throw new TlsFilesError(`${keyFile} is not an unencrypted PEM private key`)
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new TlsFilesError(`the key in ${keyFile} does not belong to the certificate in ${certFile}`)
  }
  return { certFile, keyFile, certDer: new Uint8Array(x509.raw) }
}
