// The size budgets of a built page. The management app's (issue 39): all its files together, uncompressed, within
// WEBROOT_BUDGET_BYTES, and its first load (index.html, style.css, app.js and every chunk app.js imports statically,
// each as the gateway serves it, br) within FIRST_LOAD_BUDGET_BYTES. The web authenticator's: all its files,
// gzip-compressed, within the budget its build names.
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { build } from 'esbuild'
import { compress } from '../gateway/index.js'

/** 250 KB (issue 39): every file of the app, uncompressed. */
export const WEBROOT_BUDGET_BYTES = 250 * 1000
/** 70 KB (issue 39): what a browser moves to show the login form, br-compressed as the gateway serves it. */
export const FIRST_LOAD_BUDGET_BYTES = 70 * 1000

export interface WebrootSize {
  /** Each file: uncompressed, gzip and br as the gateway serves them (never more than the file itself). */
  files: { path: string; bytes: number; gzip: number; br: number }[]
  bytes: number
  gzip: number
  /** The files a first visit fetches before login, and their br sizes summed. */
  firstLoad: { paths: string[]; br: number }
}

export class WebrootBudgetError extends Error {
  override readonly name = 'WebrootBudgetError'
}

export async function measureWebroot(dir: string): Promise<WebrootSize> {
  const files: WebrootSize['files'] = []
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    const content = await readFile(path)
    const [gzip, br] = await Promise.all([compress(content, 'gzip'), compress(content, 'br')])
    // The gateway sends a file as it is when compressing saves nothing.
    files.push({
      path: relative(dir, path),
      bytes: content.length,
      gzip: Math.min(gzip.length, content.length),
      br: Math.min(br.length, content.length),
    })
  }
  files.sort((a, b) => a.path.localeCompare(b.path))
  const paths = await firstLoadPaths(dir, new Set(files.map((file) => file.path)))
  return {
    files,
    bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    gzip: files.reduce((sum, file) => sum + file.gzip, 0),
    firstLoad: { paths, br: files.filter((file) => paths.includes(file.path)).reduce((sum, f) => sum + f.br, 0) },
  }
}

/**
 * index.html, style.css, app.js and the modules app.js imports statically, at any depth (a chunk importing another),
 * as esbuild reads the built files: a module `import()` loads is fetched later, when a screen first shows.
 */
async function firstLoadPaths(dir: string, present: Set<string>): Promise<string[]> {
  const paths = ['index.html', 'style.css', 'app.js'].filter((path) => present.has(path))
  if (!present.has('app.js')) return paths
  const { metafile } = await build({
    absWorkingDir: dir,
    entryPoints: ['app.js'],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    outdir: 'unwritten',
    logLevel: 'silent',
  })
  const pending = ['app.js']
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    for (const { path: imported, kind } of metafile.inputs[path]?.imports ?? []) {
      if (kind !== 'import-statement' || paths.includes(imported)) continue
      paths.push(imported)
      pending.push(imported)
    }
  }
  return paths
}

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`
const fileLines = (size: WebrootSize) =>
  size.files.map((file) => `  ${file.path}: ${kb(file.bytes)}, ${kb(file.gzip)} gzip, ${kb(file.br)} br`)

/** One line per file, the total and the first load against the management app's budgets. */
export function describeAppSize(size: WebrootSize): string {
  const { paths, br } = size.firstLoad
  return [
    ...fileLines(size),
    `  total: ${kb(size.bytes)} of a ${kb(WEBROOT_BUDGET_BYTES)} budget (uncompressed)`,
    `  first load: ${kb(br)} br of a ${kb(FIRST_LOAD_BUDGET_BYTES)} budget (${paths.join(', ')})`,
  ].join('\n')
}

/** Throws when the built management app is over either of its budgets. */
export function checkAppBudget(size: WebrootSize): void {
  if (size.bytes > WEBROOT_BUDGET_BYTES || size.firstLoad.br > FIRST_LOAD_BUDGET_BYTES)
    throw new WebrootBudgetError(`the management app is over its size budget:\n${describeAppSize(size)}`)
}

/** One line per file and the gzip total against a page's budget (the web authenticator's). */
export function describeWebrootSize(size: WebrootSize, budget: number): string {
  return [...fileLines(size), `  total: ${kb(size.bytes)}, ${kb(size.gzip)} gzip of a ${kb(budget)} budget`].join('\n')
}

/** Throws when the built page (`what`) is over its budget, its files gzip-compressed. */
export function checkWebrootBudget(size: WebrootSize, budget: number, what: string): void {
  if (size.gzip > budget)
    throw new WebrootBudgetError(`${what} is over its size budget:\n${describeWebrootSize(size, budget)}`)
}
