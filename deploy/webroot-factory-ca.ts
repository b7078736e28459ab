// The factory CA the management app ships: the set-up wizard checks a device's attestation against it in the
// page. Built in (esbuild `define`), never fetched: a device cannot choose what vouches for it.
import { X509Certificate } from 'node:crypto'
import { readFile } from 'node:fs/promises'

/** The development CA (deploy/keys/), the default: the app then says that it proves nothing. */
const DEV_FACTORY_CA = new URL(
  `${import.meta.url.endsWith('.ts') ? '..' : '../..'}/deploy/keys/factory-ca-dev.crt.pem`,
  import.meta.url,
)

export class FactoryCaError extends Error {
  override readonly name = 'FactoryCaError'
}

/** esbuild's `define` of `HEM_FACTORY_CA` (webroot/setup/factory-ca.ts): `pem`, one CA certificate. */
export async function factoryCaDefine(pem?: string): Promise<Record<string, string>> {
  const text = pem ?? (await readFile(DEV_FACTORY_CA, 'utf8'))
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  let ca = false
  try {
    ca = blocks.length === 1 && new X509Certificate(blocks[0]!).ca
  } catch (cause) {
    throw new FactoryCaError('the factory CA is not a PEM certificate', { cause })
  }
  if (!ca) throw new FactoryCaError('the factory CA must be exactly one PEM CA certificate')
  return { HEM_FACTORY_CA: JSON.stringify(`${blocks[0]!}\n`) }
}
