// The faces `npm run lint` keeps: a folder's index.ts only imports and re-exports.
import t from 'tap'
// @ts-expect-error: a plain .mjs script without types
import { faceProblems } from '../deploy/check-imports.mjs'

const problems = faceProblems as (file: string, text: string) => string[]

t.test('re-exports and comments pass', async (t) => {
  const face = [
    '// The face of a unit.',
    "import type { A } from './a.js'",
    "export type * from './types.js'",
    "export { b, type C } from './b.js'",
    "export * as d from './d.js'",
    "export { e as f } from './e.js'",
    'export type { A }',
  ].join('\n')
  t.same(problems('x/index.ts', face), [])
})

t.test('code in an index.ts is caught, statement by statement, with its line', async (t) => {
  const code = [
    "export { b } from './b.js'",
    'export function open() {',
    '  return 1',
    '}',
    'export const VIEWS = [1]',
    'interface Local {}',
    'open()',
  ].join('\n')
  t.same(problems('x/index.ts', code), [
    'x/index.ts:2: export function open() {',
    'x/index.ts:5: export const VIEWS = [1]',
    'x/index.ts:6: interface Local {}',
    'x/index.ts:7: open()',
  ])
})
