// The device's TLS as a client sees it: the certificate its HTTPS port serves, and its own TLS key.
import 'reflect-metadata'
import { Pkcs10CertificateRequest } from '@peculiar/x509'
import { createPublicKey, type KeyObject } from 'node:crypto'
import { connect as tlsConnect } from 'node:tls'
import { api } from './keys.js'

/** The DER certificate the HTTPS listener serves (TLS 1.3). */
export async function servedCertificate(https: string): Promise<Buffer> {
  const url = new URL(https)
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: url.hostname, port: Number(url.port), rejectUnauthorized: false, minVersion: 'TLSv1.3' },
      () => {
        resolve(socket.getPeerCertificate().raw)
        socket.destroy()
      },
    )
    socket.on('error', reject)
  })
}

/** The device's own TLS public key, from the `gen_csr` CSR (a `system:config` token). */
export async function deviceTlsKey(base: string, token: string): Promise<KeyObject> {
  const answer = await api(`${base}/api/system/config`, token, { gen_csr: true })
  if (answer.status !== 200) throw new Error(`gen_csr: ${answer.status} ${answer.text}`)
  const csr = new Pkcs10CertificateRequest(Buffer.from(answer.json.csr, 'base64'))
  if (!(await csr.verify())) throw new Error('the CSR does not verify')
  return createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' })
}
