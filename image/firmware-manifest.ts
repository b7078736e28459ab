import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { ed25519PublicKey, type SignedComponent } from '../hal/index.js'

/** The signed identity of a runtime build: what `version` shows as `fwv`, `fwk` and `fws`. */
export interface FirmwareManifest {
  version: string
  /** SHA-256 over the build tree (paths, sizes and contents), hex. */
  sha256: string
  /** Ed25519 vendor public key, base64 raw 32 bytes. */
  publicKey: string
  signature: string
}

export const MANIFEST_NAME = 'firmware.json'
/**
 * The management app a build ships, as a signed ui image in the build's own tree (so its manifest
 * covers it too): a P device installs it at its first start, when it has no app yet.
 */
export const FACTORY_WEBROOT_IMAGE = 'factory-webroot.img'

export class FirmwareManifestError extends Error {
  override readonly name = 'FirmwareManifestError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** Signs a build directory with the vendor key (the development key lives in deploy/keys). */
export async function signBuild(buildDir: string, version: string, vendorKeyPem: string): Promise<FirmwareManifest> {
  const privateKey = createPrivateKey(vendorKeyPem)
  const sha256 = await treeHash(buildDir)
  const publicKey = rawPublicKey(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }))
  const signature = sign(null, signedBytes(version, sha256), privateKey)
  const manifest = { version, sha256, publicKey: publicKey.toString('base64'), signature: signature.toString('base64') }
  await writeFile(join(buildDir, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

/**
 * What a bootloader does before it runs an image: the tree must match the manifest and its
 * signature, made with `vendorKey` (the installation's; without it, whatever key the manifest
 * names, which proves only that the tree is intact).
 */
export async function loadFirmware(buildDir: string, vendorKey?: Uint8Array): Promise<SignedComponent> {
  let manifest: FirmwareManifest
  try {
    manifest = JSON.parse(await readFile(join(buildDir, MANIFEST_NAME), 'utf8')) as FirmwareManifest
  } catch (err) {
    throw new FirmwareManifestError(`no firmware manifest in ${buildDir}: run npm run build`, { cause: err })
  }
  const publicKey = Buffer.from(manifest.publicKey ?? '', 'base64')
  const signature = Buffer.from(manifest.signature ?? '', 'base64')
  if (publicKey.length !== 32 || signature.length !== 64 || typeof manifest.version !== 'string') {
    throw new FirmwareManifestError(`the firmware manifest in ${buildDir} is malformed`)
  }
  if (vendorKey && !publicKey.equals(vendorKey)) {
    throw new FirmwareManifestError(
      `the build in ${buildDir} is signed by a key other than the vendor key this device trusts`,
    )
  }
  const actual = await treeHash(buildDir)
  if (actual !== manifest.sha256) {
    throw new FirmwareManifestError(`the build in ${buildDir} does not match its manifest: run npm run build`)
  }
  if (!verify(null, signedBytes(manifest.version, manifest.sha256), ed25519PublicKey(publicKey), signature)) {
    throw new FirmwareManifestError(`the firmware signature in ${buildDir} does not verify`)
  }
  return { version: manifest.version, publicKey, signature }
}

function rawPublicKey(spki: Buffer): Buffer {
  // An Ed25519 SPKI is a fixed 12-byte prefix and the raw key.
  return spki.subarray(12)
}

function signedBytes(version: string, sha256: string): Buffer {
  return Buffer.concat([
    Buffer.from('hemd-fw-v1\0'),
    Buffer.from(version),
    Buffer.from('\0'),
    Buffer.from(sha256, 'hex'),
  ])
}

async function treeHash(dir: string): Promise<string> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)).split(sep).join('/'))
    .filter((path) => path !== MANIFEST_NAME)
    .sort()
  // Read synchronously: a promise's read of a small file is four thread-pool round trips and their
  // JS (open, stat, read, close); about 1 200 files took 0.2–0.4 s of every boot, read so 0.08 s.
  const tree = createHash('sha256')
  for (const path of files) {
    const content = readFileSync(join(dir, path))
    tree.update(`${path}\0${content.length}\0`).update(createHash('sha256').update(content).digest())
  }
  return tree.digest('hex')
}
