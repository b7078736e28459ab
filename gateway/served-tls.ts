// `GET /api/system/tls`: the certificate chain the HTTPS listener serves. Public, as every TLS handshake
// shows it; for a page, which cannot read its own TLS session's certificate, to show the fingerprint an owner
// compares with the device's label or banner.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fromPem } from '../hal/index.js'
import { fail, type CommandReply } from '../protocol/index.js'

export interface ServedTls {
  /** Leaf first, each certificate's DER in base64. */
  chain: string[]
  /** SHA-256 of the leaf's DER, lowercase hex. */
  sha256: string
}

/** The chain in `certFile` (PEM, leaf first), as the listener loads it at its start. */
export async function readServedTls(certFile: string): Promise<ServedTls> {
  const chain = fromPem(await readFile(certFile, 'latin1'), 'CERTIFICATE')
  if (chain.length === 0) throw new Error(`${certFile} holds no PEM certificate`)
  return {
    chain: chain.map((der) => Buffer.from(der).toString('base64')),
    sha256: createHash('sha256').update(chain[0]!).digest('hex'),
  }
}

/** The answer: the chain, or 404 on a device that serves no HTTPS. */
export function servedTlsReply(served: ServedTls | undefined): CommandReply {
  if (!served) return fail(404, 'no_https', 'This device serves no HTTPS')
  return { status: 200, body: { chain: served.chain, sha256: served.sha256 } }
}
