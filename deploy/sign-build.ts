// Signs the build for release with the vendor key: the management app, built afresh, goes into the
// build as its factory image (a signed ui image), then the build's manifest is signed over the whole
// tree, that image included. `node dist/deploy/sign-build.js`; HEMD_VENDOR_KEY=FILE signs with the
// vendor's own key instead of the development one (deploy/keys/), the build and its app alike.
import { readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildImage, FACTORY_WEBROOT_IMAGE, packDirectory, signBuild } from '../image/index.js'
import { buildWebroot, WEBROOT_OUT } from './build-webroot.js'
import { WebrootBudgetError } from './webroot-budget.js'

const PACKAGE_TOP = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '..' : '../..', import.meta.url))

/** Packs the built app of `webrootDir` into `buildDir` as its factory image, then signs `buildDir`. */
export async function signRelease(
  buildDir: string,
  webrootDir: string,
  version: string,
  vendorKeyPem: string,
): Promise<ReturnType<typeof signBuild>> {
  const app = buildImage(
    { kind: 'ui', hardware: ['P'], floor: 0, version },
    await packDirectory(webrootDir),
    vendorKeyPem,
  )
  await writeFile(join(buildDir, FACTORY_WEBROOT_IMAGE), app, { mode: 0o644 })
  // A firmware slot holds the build alone, away from the package: it must say itself that it is ESM.
  await writeFile(join(buildDir, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`)
  return signBuild(buildDir, version, vendorKeyPem)
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { version } = JSON.parse(await readFile(join(PACKAGE_TOP, 'package.json'), 'utf8')) as { version: string }
  const keyPem = await readFile(process.env.HEMD_VENDOR_KEY ?? join(PACKAGE_TOP, 'deploy/keys/vendor-dev.pem'), 'utf8')
  // Over a budget, the app is built all the same and the build goes on, saying so: test/webroot-budget.test.ts
  // fails on it, rather than every test on a build that stopped.
  await buildWebroot(WEBROOT_OUT).catch((error: unknown) => {
    if (!(error instanceof WebrootBudgetError)) throw error
    console.warn(`WARNING: ${error.message}`)
  })
  const manifest = await signRelease(join(PACKAGE_TOP, 'dist'), WEBROOT_OUT, version, keyPem)
  console.log(`signed build ${manifest.version} sha256 ${manifest.sha256.slice(0, 16)}… with its factory app`)
}
