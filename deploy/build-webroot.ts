// Builds the management app (webroot/) into a web root: its page (compacted), its styles (with the
// screens' own) into one style.css, its TypeScript (with the client code it shares with hemctl)
// into ES modules: app.js, what the login needs, and chunks/, each screen's own code (and what
// screens share), fetched by `import()` the first time the screen shows.
// `node dist/deploy/build-webroot.js [OUT]`, default dist-webroot/; hem-image packs the result.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { checkAppBudget, describeAppSize, measureWebroot, type WebrootSize } from './webroot-budget.js'
import { factoryCaDefine } from './webroot-factory-ca.js'

const PACKAGE_TOP = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '..' : '../..', import.meta.url))
const SOURCE = join(PACKAGE_TOP, 'webroot')
export const WEBROOT_OUT = join(PACKAGE_TOP, 'dist-webroot')

/**
 * Replaces `outDir` with a fresh build; the same sources give the same bytes. Returns its size;
 * WebrootBudgetError when it is over its budget (webroot-budget.ts). `factoryCa` (PEM) is the CA the set-up
 * wizard checks attestations against, by default the development one (webroot-factory-ca.ts).
 */
export async function buildWebroot(
  outDir: string = WEBROOT_OUT,
  { factoryCa }: { factoryCa?: string } = {},
): Promise<WebrootSize> {
  await rm(outDir, { recursive: true, force: true })
  await mkdir(outDir, { recursive: true })
  await build({
    entryPoints: [join(SOURCE, 'app.ts')],
    outdir: outDir,
    // Named by their content: the same sources give the same names, and a new app never serves a chunk
    // of the old one under the same name.
    chunkNames: 'chunks/[name]-[hash]',
    tsconfig: join(SOURCE, 'tsconfig.json'),
    bundle: true,
    format: 'esm',
    splitting: true,
    platform: 'browser',
    target: 'es2022',
    minify: true,
    // As it is, not \u-escaped: the page and the gateway say UTF-8, and the app's words have dashes and ellipses.
    charset: 'utf8',
    logLevel: 'warning',
    define: await factoryCaDefine(factoryCa),
  })
  // One stylesheet: style.css and the screens' own, which it @imports.
  await build({
    entryPoints: [join(SOURCE, 'style.css')],
    outfile: join(outDir, 'style.css'),
    bundle: true,
    minify: true,
    logLevel: 'warning',
  })
  await writeFile(join(outDir, 'index.html'), compactHtml(await readFile(join(SOURCE, 'index.html'), 'utf8')))
  const size = await measureWebroot(outDir)
  checkAppBudget(size)
  return size
}

/**
 * The page as it is, less what is there for its reader: its comments, and the line breaks and indents between
 * tags (never a space between two tags on one line, which shows between inline elements).
 */
export function compactHtml(html: string): string {
  return `${html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/>\s*\n\s*</g, '><')
    .trim()}\n`
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const out = resolve(process.argv[2] ?? WEBROOT_OUT)
  const size = await buildWebroot(out)
  console.log(`built the management app into ${out}\n${describeAppSize(size)}`)
}
