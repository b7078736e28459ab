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
