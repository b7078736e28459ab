// Builds the web authenticator (authapp/) into the page hem-cloud serves at /authenticator/: its page as it is, its
// styles into one style.css, its TypeScript (with the authenticator's core and a QR decoder) into one app.js.
// `node dist/deploy/build-authapp.js [OUT]`, default dist-authapp/; deploy/setup.sh runs it when a source changed.
import { copyFile, mkdir, rm } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { checkWebrootBudget, describeWebrootSize, measureWebroot, type WebrootSize } from './webroot-budget.js'

const PACKAGE_TOP = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '..' : '../..', import.meta.url))
const SOURCE = join(PACKAGE_TOP, 'authapp')
export const AUTHAPP_OUT = join(PACKAGE_TOP, 'dist-authapp')
const COPIED = ['index.html', 'manifest.json']

/** 100 KB compressed: a phone on a slow network opens it in a few seconds; the build measures what it needs. */
export const AUTHAPP_BUDGET_BYTES = 100 * 1000

/** Replaces `outDir` with a fresh build; the same sources give the same bytes. WebrootBudgetError when over budget. */
export async function buildAuthapp(outDir: string = AUTHAPP_OUT): Promise<WebrootSize> {
  await rm(outDir, { recursive: true, force: true })
  await mkdir(outDir, { recursive: true })
  await build({
    entryPoints: [join(SOURCE, 'app.ts')],
    outfile: join(outDir, 'app.js'),
    tsconfig: join(SOURCE, 'tsconfig.json'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    logLevel: 'warning',
  })
  await build({
    entryPoints: [join(SOURCE, 'style.css')],
    outfile: join(outDir, 'style.css'),
    bundle: true,
    minify: true,
    logLevel: 'warning',
  })
  for (const file of COPIED) await copyFile(join(SOURCE, file), join(outDir, file))
  const size = await measureWebroot(outDir)
  checkWebrootBudget(size, AUTHAPP_BUDGET_BYTES, 'the web authenticator')
  return size
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const out = resolve(process.argv[2] ?? AUTHAPP_OUT)
  const size = await buildAuthapp(out)
  console.log(`built the web authenticator into ${out}\n${describeWebrootSize(size, AUTHAPP_BUDGET_BYTES)}`)
}
