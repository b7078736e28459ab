import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createTlsCertificate } from '../hal/index.js'
import type { TlsFiles } from './types.js'

/**
 * A self-signed P-256 certificate made the way the device makes its own, so that the HTTPS
 * baselines pay the same TLS costs as hemd.
 */
export async function writeBenchCertificate(dir: string): Promise<TlsFiles> {
  const { certPem, keyPem } = createTlsCertificate('bench', randomBytes(16), Date.now())
  const files = { certFile: join(dir, 'bench-cert.pem'), keyFile: join(dir, 'bench-key.pem') }
  await writeFile(files.certFile, certPem)
  await writeFile(files.keyFile, keyPem, { mode: 0o600 })
  return files
}
