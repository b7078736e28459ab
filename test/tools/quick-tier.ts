// The quick tier (`npm run test:quick`): the test files that start no device (in the test process
// or as hemd), no browser, no bench and no install, told from their imports: a file is slow if it,
// or a helper it imports (followed through the helpers), imports one of the modules below.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const testDir = fileURLToPath(new URL('..', import.meta.url))

/** What starts a device, a hemd or bench process, or a browser (paths from test/). */
const STARTERS = [
  'helpers/device.js',
  'helpers/hemd-process.js',
  'helpers/browser.js',
  'helpers/service-processes.js',
  'helpers/operator-checkout.js',
  '../runtime/start-device.js',
  '../runtime/index.js',
]

const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1]!))
}

const slow = new Map<string, boolean>()
const starters = new Set(STARTERS.map((s) => resolve(testDir, s)))

function startsSomething(file: string, seen = new Set<string>()): boolean {
  const known = slow.get(file)
  if (known !== undefined) return known
  if (seen.has(file)) return false
  seen.add(file)
  const result = imports(file).some((target) => {
    if (starters.has(target)) return true
    const helper = target.replace(/\.js$/, '.ts')
    return helper.startsWith(join(testDir, 'helpers')) && startsSomething(helper, seen)
  })
  slow.set(file, result)
  return result
}

export function quickTier(): string[] {
  return readdirSync(testDir)
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(testDir, name))
    .filter((file) => !startsSomething(file))
    .map((file) => relative(join(testDir, '..'), file))
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${quickTier().join('\n')}\n`)
}
