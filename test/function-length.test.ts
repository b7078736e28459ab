// The function-length rule `npm run lint` enforces: a function over 80 lines is caught, whatever its form, unless a
// `// long: <reason>` comment above it says why.
import t from 'tap'
// @ts-expect-error: a plain .mjs script without types
import { LIMIT, longFunctions } from '../deploy/check-function-length.mjs'

type Long = { file: string; line: number; name: string; lines: number }
const check = longFunctions as (file: string, text: string, limit?: number) => Long[]

/** A body of `n` lines in all, its first line the one `head` opens and its last the closing brace. */
const body = (head: string, n: number, close = '}') =>
  [head, ...Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i}`), close].join('\n')

t.equal(LIMIT, 80)

t.test('a function of 80 lines passes, of 81 is caught with its name, line and length', async (t) => {
  t.same(check('a.ts', body('function fits() {', 80)), [])
  t.same(check('a.ts', `// one\n${body('export function over() {', 81)}\n`), [
    { file: 'a.ts', line: 2, name: 'over', lines: 81 },
  ])
})

t.test('methods, constructors, arrows and function expressions count too', async (t) => {
  const text = [
    body('class C {\n  constructor() {', 81, '  }\n  m() {}\n}'),
    body('class D {\n  async method() {', 81, '  }\n}'),
    body('const arrow = async () => {', 81),
    body('const expression = function () {', 81),
    body('const o = { property: () => {', 81, '} }'),
    body('call(() => {', 81, '})'),
  ].join('\n')
  t.same(
    check('b.ts', text).map((f) => f.name),
    ['constructor', 'method', 'arrow', 'expression', 'property', '<anonymous>'],
  )
})

t.test('a `// long: <reason>` comment above a function exempts it, and only it', async (t) => {
  const reason = '// long: one table, read top to bottom'
  const exempt = `/** Documented. */\n${reason}\n${body('export function table() {', 90)}\n`
  t.same(check('c.ts', exempt), [])
  t.same(check('c.ts', `// long: the reason\n${body('const arrow = () => {', 90)}\n`), [], 'on an arrow')
  t.same(check('c.ts', `// long:\n${body('function noReason() {', 90)}\n`).length, 1, 'a reason is required')
  const inner = `// long: the outer one\n${body('function outer() {\n  function inner() {', 95, '  }\n}')}\n`
  t.same(
    check('c.ts', inner).map((f) => f.name),
    ['inner'],
    'the inner function needs its own',
  )
})
