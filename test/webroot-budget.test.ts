// The management app's size budget, measured on the real build: what a first visit fetches,
// gzip-compressed, stays within 250 KB.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { buildWebroot } from '../deploy/build-webroot.js'
import {
  checkWebrootBudget,
  describeWebrootSize,
  measureWebroot,
  WEBROOT_BUDGET_BYTES,
  WebrootBudgetError,
} from '../deploy/webroot-budget.js'

t.test('the built app is within its budget', async (t) => {
  const dir = t.testdir()
  const size = await buildWebroot(dir)
  t.same(size, await measureWebroot(dir), 'the build measures what it wrote')
  t.match(
    size.files.map((file) => file.path),
    ['app.js', 'index.html', 'style.css'],
    'the page, its script and its styles',
  )
  t.ok(size.gzip <= WEBROOT_BUDGET_BYTES, `within the budget:\n${describeWebrootSize(size)}`)
  t.doesNotThrow(() => checkWebrootBudget(size))
  t.ok(
    size.files.every((file) => file.gzip < file.bytes),
    'each file counted compressed',
  )
})

t.test('an app over its budget is refused, with every file named', async (t) => {
  const dir = t.testdir({ 'index.html': '<!doctype html>' })
  // Random bytes do not compress: this alone is over the budget.
  await writeFile(join(dir, 'bloat.js'), randomBytes(WEBROOT_BUDGET_BYTES + 1))
  const size = await measureWebroot(dir)
  t.ok(size.gzip > WEBROOT_BUDGET_BYTES)
  t.throws(() => checkWebrootBudget(size), WebrootBudgetError)
  t.throws(() => checkWebrootBudget(size), { message: /bloat\.js: 250\.\d KB, 250\.\d KB gzip/ })
})
