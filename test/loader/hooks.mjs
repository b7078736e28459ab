// A test process loads the device from dist/ (what `npm test` built and signed first, and what a
// board runs): compiled once, not transpiled again by each of the ~200 test processes. Only the
// tests' own TypeScript (test/) is transpiled, by esbuild, and the result is cached on disk by
// content, so a file is transpiled once per change, not once per process.
// Type checking is `npm run typecheck`'s job.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve as resolvePath, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const repo = resolvePath(fileURLToPath(new URL('../..', import.meta.url)))
const dist = join(repo, 'dist')
const repoURL = pathToFileURL(repo + sep).href
const tests = join(repo, 'test')
const cacheDir = join(repo, 'node_modules', '.cache', 'hemd-test-ts')
const inside = (path, dir) => path.startsWith(dir + sep)

let esbuild

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL
  if (!parent?.startsWith('file:') || !parent.endsWith('.ts') || !specifier.endsWith('.js')) {
    return nextResolve(specifier, context)
  }
  if (!(specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:'))) {
    return nextResolve(specifier, context)
  }
  // Sources import each other by their compiled names (`./x.js`), as NodeNext requires.
  const target = fileURLToPath(new URL(specifier, parent))
  const source = `${target.slice(0, -3)}.ts`
  if (
    inside(target, repo) &&
    !inside(target, tests) &&
    !inside(target, dist) &&
    !inside(target, join(repo, 'node_modules'))
  ) {
    const built = join(dist, relative(repo, target))
    if (existsSync(built)) {
      if (existsSync(source) && statSync(source).mtimeMs > statSync(built).mtimeMs) {
        throw new Error(`dist/ is older than ${relative(repo, source)}: run \`npm run build\` (npm test does)`)
      }
      return { url: pathToFileURL(built).href, shortCircuit: true }
    }
  }
  if (!existsSync(target) && existsSync(source)) return { url: pathToFileURL(source).href, shortCircuit: true }
  return nextResolve(specifier, context)
}

export async function load(url, context, nextLoad) {
  // Compiled scripts (dist/, node_modules/) load here, not through tap's processinfo hook after this
  // one: it reads every file again, sends its bytes to the main thread and looks up its source map
  // there, about 0.3 s of CPU per test process for a list of files no run of ours reads. Coverage
  // is unchanged: it is V8's, mapped through the source maps Node keeps of every module.
  const format = url.startsWith(repoURL) ? scriptFormat(url) : undefined
  if (format === 'module') return { format, source: readFileSync(fileURLToPath(url)), shortCircuit: true }
  if (format === 'commonjs') return { format, shortCircuit: true }
  if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  const source = readFileSync(path, 'utf8')
  const cached = join(cacheDir, `${createHash('sha256').update(path).update('\0').update(source).digest('hex')}.js`)
  if (existsSync(cached)) return { format: 'module', source: readFileSync(cached, 'utf8'), shortCircuit: true }
  esbuild ??= await import('esbuild')
  const { code } = await esbuild.transform(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    sourcefile: path,
  })
  // Written under a temporary name and renamed, so that a parallel test process never reads half a file.
  mkdirSync(dirname(cached), { recursive: true })
  const temporary = `${cached}.${process.pid}.tmp`
  writeFileSync(temporary, code)
  renameSync(temporary, cached)
  return { format: 'module', source: code, shortCircuit: true }
}

const packageTypes = new Map()

/** The format Node gives a compiled script, by its extension or its package's type; undefined for other files. */
function scriptFormat(url) {
  if (url.endsWith('.mjs')) return 'module'
  if (url.endsWith('.cjs')) return 'commonjs'
  if (!url.endsWith('.js') || url.includes('?') || url.includes('#')) return undefined
  return packageType(dirname(fileURLToPath(url)))
}

function packageType(dir) {
  let type = packageTypes.get(dir)
  if (type !== undefined) return type
  const manifest = join(dir, 'package.json')
  if (existsSync(manifest)) type = JSON.parse(readFileSync(manifest, 'utf8')).type === 'module' ? 'module' : 'commonjs'
  else type = dirname(dir) === dir ? 'commonjs' : packageType(dirname(dir))
  packageTypes.set(dir, type)
  return type
}
