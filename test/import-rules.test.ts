// The import rules `npm run lint` enforces: the tree keeps them, and a breach of each kind is caught.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
// @ts-expect-error: a plain .mjs script without types
import { checkImports, unitCycles } from '../deploy/check-imports.mjs'

const folders = ['protocol', 'machines', 'actors', 'gateway', 'hal']

type Check = (cwd?: string, folders?: string[]) => { problems: string[]; modules: number }
const check = checkImports as Check

function tree(files: Record<string, string>): string {
  const dir = t.testdir({})
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  writeFileSync(
    join(dir, 'tsconfig.test.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  )
  for (const folder of [...folders, 'cli']) mkdirSync(join(dir, folder), { recursive: true })
  return dir
}

/** What the rules find in a tree of these files (in `scope`, the folders cruised). */
const problemsOf = (files: Record<string, string>, scope = folders) => check(tree(files), scope).problems

t.test('the tree keeps every import rule', async (t) => {
  const { problems, modules } = check()
  t.same(problems, [])
  t.ok(modules > 300, `${modules} modules cruised`)
})

t.test('a module cycle is caught, type-only ones included', async (t) => {
  const problems = problemsOf({
    'protocol/index.ts': "export type { A } from './a.js'\n",
    'protocol/a.ts': "import type { B } from './b.js'\nexport interface A { b?: B }\n",
    'protocol/b.ts': "import type { A } from './a.js'\nexport interface B { a?: A }\n",
  })
  t.ok(
    problems.some((p) => p.startsWith('no-circular:')),
    problems.join('\n'),
  )
})

t.test('an import against the flow is caught', async (t) => {
  const problems = problemsOf({
    'machines/index.ts': "export { m } from './m.js'\n",
    'machines/m.ts': "import { g } from '../gateway/index.js'\nexport const m = g\n",
    'gateway/index.ts': 'export const g = 1\n',
  })
  t.ok(problems.includes('machines-imports: machines/m.ts -> gateway/index.ts'), problems.join('\n'))
})

t.test('hal imports nothing of ours, protocol nothing at all', async (t) => {
  const problems = problemsOf({
    'hal/index.ts': "import { p } from '../protocol/index.js'\nexport const h = p\n",
    'protocol/index.ts': "import { h } from '../hal/index.js'\nexport const p = 1\nexport const q = h\n",
  })
  t.ok(problems.includes('hal-imports: hal/index.ts -> protocol/index.ts'), problems.join('\n'))
  t.ok(problems.includes('protocol-imports: protocol/index.ts -> hal/index.ts'), problems.join('\n'))
})

t.test('another folder reaches inside only through a face, but a lazy import() may', async (t) => {
  const problems = problemsOf({
    'protocol/index.ts': "export { a } from './a.js'\n",
    'protocol/a.ts': 'export const a = 1\n',
    'machines/index.ts':
      "import { a } from '../protocol/a.js'\nexport const m = a\n" +
      "export const lazy = () => import('../protocol/a.js')\n",
  })
  t.same(problems, ['protocol-through-face: machines/index.ts -> protocol/a.ts'])
})

t.test('the management app uses other units through their browser faces only', async (t) => {
  const problems = problemsOf(
    {
      'protocol/index.ts': "export { a } from './a.js'\n",
      'protocol/browser.ts': "export { a } from './a.js'\n",
      'protocol/a.ts': 'export const a = 1\n',
      'webroot/face.ts': "import { a } from '../protocol/browser.js'\nexport const f = a\n",
      'webroot/file.ts': "import { a } from '../protocol/a.js'\nexport const f = a\n",
      'webroot/index.ts': "import { a } from '../protocol/index.js'\nexport const f = a\n",
    },
    ['protocol', 'webroot'],
  )
  t.same(problems.sort(), [
    'protocol-through-face: webroot/file.ts -> protocol/a.ts',
    'webroot-browser-faces: webroot/index.ts -> protocol/index.ts',
  ])
})

t.test('what a browser face or the management app reaches holds no node module', async (t) => {
  const problems = problemsOf(
    {
      'eventstore/browser.ts': "export { h } from './hash.js'\n",
      'eventstore/hash.ts': "import { createHash } from 'node:crypto'\nexport const h = createHash\n",
      'webroot/app.ts': "import { h } from '../eventstore/browser.js'\nexport const f = h\n",
    },
    ['eventstore', 'webroot'],
  )
  t.same(problems.sort(), [
    'browser-faces-free-of-node: eventstore/browser.ts -> crypto',
    'browser-faces-free-of-node: webroot/app.ts -> crypto',
  ])
})

t.test('a cycle between two actors is caught though no module cycle exists', async (t) => {
  const problems = problemsOf({
    'actors/auth/index.ts': "export { a } from './a.js'\n",
    'actors/auth/a.ts': "import { l } from '../logger/index.js'\nexport const a = l\n",
    'actors/logger/index.ts': "export { l } from './l.js'\n",
    'actors/logger/l.ts': 'export const l = 1\n',
    'actors/logger/uses-auth.ts': "import { a } from '../auth/index.js'\nexport const u = a\n",
  })
  t.same(problems, ['unit cycle: actors/auth, actors/logger'])
})

t.test('unit cycles: units of actors/ and cli/ are their folders; others the top folder', async (t) => {
  const module = (source: string, ...to: string[]) => ({ source, dependencies: to.map((resolved) => ({ resolved })) })
  t.same(unitCycles([module('hal/sim/a.ts', 'hal/x509/b.ts'), module('hal/x509/b.ts', 'hal/sim/a.ts')]), [])
  t.same(unitCycles([module('cli/hemd/a.ts', 'cli/hemctl/b.ts'), module('cli/hemctl/b.ts', 'cli/hemd/a.ts')]), [
    ['cli/hemctl', 'cli/hemd'],
  ])
  t.same(unitCycles([module('test/a.ts', 'bus/b.ts'), module('bus/b.ts', 'test/a.ts')]), [])
})
