import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildWebroot } from '../../deploy/build-webroot.js'
import { signRelease } from '../../deploy/sign-build.js'
import { fromPem, toPem } from '../../hal/x509/pem.js'
import { repoRoot } from './device.js'
import { issue, makeCa } from './x509-fixtures.js'

/** The operator's own key files (public halves), as install.sh takes them. */
export interface OperatorKeys {
  backendKey: string
  vendorKey: string
  factoryCa: string
  /** The private halves, for tests that sign as the backend or the vendor. */
  backend: KeyObject
  vendor: KeyObject
}

export interface OperatorCheckout {
  /** deploy/install.sh of the copy. */
  installScript: string
  keys: OperatorKeys
  /** install.sh's key flags for `keys`. */
  keyArgs: string[]
}

/**
 * A checkout as an operator installs from: this build, signed with the operator's own vendor key
 * (install.sh refuses the development keys, and the build must verify against the vendor key it
 * is given), beside the operator's own keys. The dependencies are this checkout's, linked.
 */
export async function operatorCheckout(dir: string): Promise<OperatorCheckout> {
  const src = join(dir, 'src')
  await mkdir(src, { recursive: true })
  for (const part of ['dist', 'dist-authapp', 'deploy', 'package.json', 'package-lock.json'])
    await cp(join(repoRoot, part), join(src, part), { recursive: true })
  // The app is signed into the build as its factory image, with the operator's key like the build.
  await buildWebroot(join(src, 'dist-webroot'))
  await symlink(join(repoRoot, 'node_modules'), join(src, 'node_modules'), 'dir')
  const keys = await operatorKeys(join(dir, 'keys'))
  const { version } = JSON.parse(await readFile(join(src, 'dist', 'firmware.json'), 'utf8')) as { version: string }
  const vendorPem = keys.vendor.export({ type: 'pkcs8', format: 'pem' }).toString()
  await signRelease(join(src, 'dist'), join(src, 'dist-webroot'), version, vendorPem)
  return {
    installScript: join(src, 'deploy', 'install.sh'),
    keys,
    keyArgs: ['--backend-key', keys.backendKey, '--vendor-key', keys.vendorKey, '--factory-ca', keys.factoryCa],
  }
}

/** New backend and vendor Ed25519 keys and a factory CA, written as PEM files into `dir`. */
export async function operatorKeys(dir: string): Promise<OperatorKeys> {
  await mkdir(dir, { recursive: true })
  const backend = generateKeyPairSync('ed25519')
  const vendor = generateKeyPairSync('ed25519')
  const ca = await makeCa('Operator Factory CA')
  const write = async (name: string, text: string) => {
    await writeFile(join(dir, name), text)
    return join(dir, name)
  }
  const spki = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString()
  return {
    backendKey: await write('backend.pub.pem', spki(backend.publicKey)),
    vendorKey: await write('vendor.pub.pem', spki(vendor.publicKey)),
    factoryCa: await write('factory-ca.crt.pem', toPem('CERTIFICATE', ca.cert)),
    backend: backend.privateKey,
    vendor: vendor.privateKey,
  }
}

/** The published development keys as an operator could be handed them: each a public key or CA certificate file. */
export interface PublishedKeyFiles {
  /** The public halves of deploy/keys/'s backend and vendor keys (SPKI PEM). */
  backendKey: string
  vendorKey: string
  /** deploy/keys/'s factory CA certificate itself. */
  factoryCa: string
  /** A CA certificate re-issued from the development factory CA's key: other name, other bytes, the same key. */
  reissuedFactoryCa: string
  /** A certificate of the development vendor key (issued by the development CA): the key in another wrapping. */
  vendorKeyCertificate: string
}

export async function publishedKeyFiles(dir: string): Promise<PublishedKeyFiles> {
  await mkdir(dir, { recursive: true })
  const devKeys = join(repoRoot, 'deploy', 'keys')
  const privateKey = async (name: string) => createPrivateKey(await readFile(join(devKeys, name)))
  const write = async (name: string, text: string) => {
    await writeFile(join(dir, name), text)
    return join(dir, name)
  }
  const publicHalf = async (name: string) =>
    createPublicKey(await privateKey(name))
      .export({ type: 'spki', format: 'pem' })
      .toString()
  const factoryCa = join(devKeys, 'factory-ca-dev.crt.pem')
  const ca = {
    key: await privateKey('factory-ca-dev.key.pem'),
    cert: fromPem(await readFile(factoryCa, 'utf8'), 'CERTIFICATE')[0]!,
  }
  const reissued = await issue(ca, ca.key, 'Not The Development Factory CA', { ca: true })
  const vendorCertificate = await issue(ca, createPublicKey(await privateKey('vendor-dev.pem')), 'Vendor')
  return {
    backendKey: await write('backend-dev.pub.pem', await publicHalf('backend-dev.pem')),
    vendorKey: await write('vendor-dev.pub.pem', await publicHalf('vendor-dev.pem')),
    factoryCa,
    reissuedFactoryCa: await write('factory-ca-reissued.crt.pem', toPem('CERTIFICATE', reissued)),
    vendorKeyCertificate: await write('vendor-dev.crt.pem', toPem('CERTIFICATE', vendorCertificate)),
  }
}
