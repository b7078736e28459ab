// The management app's size budgets, measured on the real build (issue 39): all its files together, uncompressed,
// within 250 KB; its first load (index.html, style.css, app.js and the chunks app.js imports statically), br as the
// gateway serves it, within 70 KB; each screen a chunk of its own, loaded on its first visit.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { brotliCompressSync, constants } from 'node:zlib'
import { buildWebroot } from '../deploy/build-webroot.js'
import {
  checkAppBudget,
  describeAppSize,
  FIRST_LOAD_BUDGET_BYTES,
  measureWebroot,
  WEBROOT_BUDGET_BYTES,
  WebrootBudgetError,
} from '../deploy/webroot-budget.js'

/** A module of `bytes` bytes of which br keeps about 3/4: a string of random base64. */
const incompressible = (bytes: number) =>
  `export default "${randomBytes(bytes)
    .toString('base64')
    .slice(0, bytes - 20)}"\n`

const SCREENS = ['audit-view', 'dashboard-view', 'health-view', 'keys-view', 'settings-view', 'upgrades-view']

t.test('the built app is within its budgets, its screens loaded on their first visit', async (t) => {
  const dir = t.testdir()
  const size = await buildWebroot(dir)
  t.same(size, await measureWebroot(dir), 'the build measures what it wrote')
  const paths = size.files.map((file) => file.path)
  t.ok(
    ['app.js', 'index.html', 'style.css'].every((path) => paths.includes(path)),
    'the page, its script, its styles',
  )
  for (const screen of SCREENS)
    t.ok(
      paths.some((path) => new RegExp(`^chunks/${screen}-[A-Z0-9]{8}\\.js$`).test(path)),
      `${screen}: a chunk of its own, named by its content`,
    )
  t.ok(size.bytes <= WEBROOT_BUDGET_BYTES, `within the budget, uncompressed:\n${describeAppSize(size)}`)
  t.ok(size.firstLoad.br <= FIRST_LOAD_BUDGET_BYTES, 'the first load within its budget, br')
  t.doesNotThrow(() => checkAppBudget(size))

  const { paths: firstLoad } = size.firstLoad
  t.same(firstLoad.slice(0, 3), ['index.html', 'style.css', 'app.js'], 'the first load: the page, its styles, app.js')
  t.notOk(
    firstLoad.some((path) => SCREENS.some((screen) => path.startsWith(`chunks/${screen}-`))),
    'and no screen',
  )
  const app = await readFile(join(dir, 'app.js'), 'utf8')
  for (const path of firstLoad.slice(3)) t.ok(/^chunks\/chunk-[A-Z0-9]{8}\.js$/.test(path), `${path}: shared code`)
  t.ok(firstLoad.length > 3 && firstLoad.slice(3).some((path) => app.includes(`"./${path}"`)), 'imported by app.js')
  const firstLoadText = (await Promise.all(firstLoad.map((path) => readFile(join(dir, path), 'utf8')))).join('\n')
  // What login needs is there; the QR code, the audit records' msgpack decoder and the journal verifier are not.
  t.match(firstLoadText, /Log in to the HEM management app/, 'the login (by approval too)')
  t.notMatch(firstLoadText, /QR Code|Reed-Solomon|numeric|alphanumeric/i, 'no QR code')
  t.notMatch(firstLoadText, /msgpackr|is not journal data|bytes after the value/, 'no msgpack decoder')
  t.notMatch(firstLoadText, /file appears twice in the set|no seal or signed head covers/, 'no audit verifier')

  const index = await readFile(join(dir, 'index.html'), 'utf8')
  t.match(index, /<script type="module" src="app.js"><\/script>/, 'app.js as a module')

  const again = t.testdir()
  t.same(await buildWebroot(again), size, 'the same sources give the same files, names and bytes')
  const brotli = brotliCompressSync(await readFile(join(dir, 'app.js')), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11 },
  })
  t.equal(size.files.find((file) => file.path === 'app.js')!.br, brotli.length, 'br as the gateway serves it')
})

t.test('an app over a budget is refused, with every file named', async (t) => {
  const dir = t.testdir({ 'index.html': '<!doctype html>', 'app.js': 'import "./chunks/big.js"\n', chunks: {} })
  // Random bytes compress little (their base64 to 3/4): this alone is over both budgets.
  await writeFile(join(dir, 'chunks', 'big.js'), incompressible(WEBROOT_BUDGET_BYTES))
  const size = await measureWebroot(dir)
  t.same(size.firstLoad.paths, ['index.html', 'app.js', 'chunks/big.js'], 'a chunk app.js imports is first load')
  t.throws(() => checkAppBudget(size), WebrootBudgetError)
  t.throws(() => checkAppBudget(size), { message: /chunks\/big\.js: 250\.\d KB, 1\d\d\.\d KB gzip, 1\d\d\.\d KB br/ })

  const lazy = t.testdir({ 'index.html': '<!doctype html>', 'app.js': 'void import("./chunks/big.js")\n', chunks: {} })
  await writeFile(join(lazy, 'chunks', 'big.js'), incompressible((FIRST_LOAD_BUDGET_BYTES * 4) / 3))
  const lazySize = await measureWebroot(lazy)
  t.same(lazySize.firstLoad.paths, ['index.html', 'app.js'], 'a chunk app.js imports on demand is not')
  t.doesNotThrow(() => checkAppBudget(lazySize), 'within both budgets')
  await writeFile(join(lazy, 'app.js'), 'import "./chunks/big.js"\n')
  const eager = await measureWebroot(lazy)
  t.throws(() => checkAppBudget(eager), { message: /first load: 7\d\.\d KB br of a 70\.0 KB/ })
})
