// hem-cloud serves the web authenticator at /authenticator/: each file of the built page with the management app's
// headers (a strict CSP and the rest), GET and HEAD only, nothing else under the path, no path out of it; the
// page's size budget, checked at build.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { AUTHAPP_BUDGET_BYTES, buildAuthapp } from '../deploy/build-authapp.js'
import { checkWebrootBudget, measureWebroot, WebrootBudgetError } from '../deploy/webroot-budget.js'
import { PAGE_HEADERS, StaticPageError, staticPageRoutes } from '../cloud/static-page.js'
import { testCloud } from './helpers/cloud.js'
import { call } from './helpers/http.js'
import { rawExchange } from './helpers/raw-http.js'

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/** A page directory as the build leaves it, small and known. */
async function pageDir(root: string): Promise<string> {
  const dir = join(root, 'page')
  await mkdir(dir)
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>page</title>')
  await writeFile(join(dir, 'app.js'), 'void 0')
  await writeFile(join(dir, 'style.css'), 'body{}')
  await writeFile(join(root, 'secret.txt'), 'outside the page')
  // Neither a link nor a folder inside is part of the page.
  await symlink(join(root, 'secret.txt'), join(dir, 'linked.js'))
  await mkdir(join(dir, 'sub'))
  await writeFile(join(dir, 'sub', 'deep.js'), 'void 1')
  return dir
}

t.test('each file with its type and the strict headers; GET and HEAD; 404 for anything else', async (t) => {
  const root = t.testdir()
  const { cloud } = await testCloud(t, { page: await pageDir(root) })
  const cases: [string, string, string][] = [
    ['/authenticator/', 'text/html; charset=utf-8', '<!doctype html><title>page</title>'],
    ['/authenticator/index.html', 'text/html; charset=utf-8', '<!doctype html><title>page</title>'],
    ['/authenticator/app.js', 'text/javascript; charset=utf-8', 'void 0'],
    ['/authenticator/style.css', 'text/css; charset=utf-8', 'body{}'],
  ]
  for (const [path, type, body] of cases) {
    const answer = await call(`${cloud.url}${path}`)
    t.equal(answer.status, 200, path)
    t.equal(answer.text, body, path)
    t.match(
      answer.headers,
      {
        'content-type': type,
        'content-length': String(Buffer.byteLength(body)),
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
        'permissions-policy': 'camera=(self), microphone=(), geolocation=()',
      },
      `${path}: headers`,
    )
    t.notOk('access-control-allow-origin' in answer.headers, `${path}: no CORS (a page is no API)`)
    const head = await call(`${cloud.url}${path}`, { method: 'HEAD' })
    t.match(head, { status: 200, text: '' }, `HEAD ${path}: no body`)
    t.equal(head.headers['content-length'], String(Buffer.byteLength(body)), `HEAD ${path}: the length of GET's`)
  }
  const bare = await call(`${cloud.url}/authenticator`)
  t.match(bare, { status: 308, headers: { location: '/authenticator/' } }, 'the bare path goes to the page')

  const target = { port: cloud.port, tls: false }
  const raw = (path: string, method = 'GET') =>
    rawExchange(target, { steps: [Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: cloud\r\n\r\n`)] })
  for (const path of [
    '/authenticator/../secret.txt',
    '/authenticator/..%2fsecret.txt',
    '/authenticator/%2e%2e/secret.txt',
    '/authenticator/linked.js',
    '/authenticator/sub/deep.js',
    '/authenticator/sub',
    '/authenticator/nothing.js',
    '/authenticator/app.js/',
    '/authenticator//app.js',
  ]) {
    const { responses } = await raw(path)
    t.equal(responses[0]?.status, 404, `${path}: 404`)
    t.notMatch(responses[0]?.body.toString() ?? '', /outside the page|void 1/, `${path}: nothing of it`)
  }
  for (const method of ['POST', 'DELETE', 'PUT']) {
    const answer = (await raw('/authenticator/app.js', method)).responses[0]
    t.equal(answer?.status, 405, `${method}: refused`)
    const allow = answer?.headers.find(([name]) => name === 'Allow')?.[1]
    t.equal(allow, 'GET, HEAD, OPTIONS', `${method}: GET and HEAD named`)
  }
})

t.test('the page is served only when built or named; a folder that is not a page is refused', async (t) => {
  const root = t.testdir()
  const { cloud } = await testCloud(t, { page: false })
  t.equal((await call(`${cloud.url}/authenticator/`)).status, 404, 'page: false serves none')
  await mkdir(join(root, 'empty'))
  await t.rejects(staticPageRoutes(join(root, 'empty')), StaticPageError, 'no index.html: not a page')
  await mkdir(join(root, 'big'))
  await writeFile(join(root, 'big', 'index.html'), randomBytes(5 * 1024 * 1024))
  await t.rejects(staticPageRoutes(join(root, 'big')), StaticPageError, 'more than a page')
})

t.test('the built page: its files, within its budget, served as built', async (t) => {
  const dir = t.testdir()
  const size = await buildAuthapp(dir)
  t.same(size, await measureWebroot(dir), 'the build measures what it wrote')
  t.same(
    size.files.map((file) => file.path),
    ['app.js', 'index.html', 'manifest.json', 'style.css'],
  )
  t.ok(size.gzip <= AUTHAPP_BUDGET_BYTES, `within ${AUTHAPP_BUDGET_BYTES} bytes compressed: ${size.gzip}`)
  const html = await readFile(join(dir, 'index.html'), 'utf8')
  t.notMatch(html, /<script>|\sstyle=|\son[a-z]+=/i, 'no inline script, style or handler: the CSP holds unrelaxed')

  const { cloud } = await testCloud(t, { page: dir })
  const served = await call(`${cloud.url}/authenticator/app.js`)
  t.equal(served.text, await readFile(join(dir, 'app.js'), 'utf8'), 'served as built')
  t.equal(served.headers['content-security-policy'], PAGE_HEADERS['Content-Security-Policy'])
})

t.test('a page over its budget is refused with its own budget named', async (t) => {
  const dir = t.testdir({ 'index.html': '<!doctype html>' })
  await writeFile(join(dir, 'bloat.js'), randomBytes(AUTHAPP_BUDGET_BYTES + 1))
  const size = await measureWebroot(dir)
  t.throws(() => checkWebrootBudget(size, AUTHAPP_BUDGET_BYTES, 'the web authenticator'), WebrootBudgetError)
  t.throws(() => checkWebrootBudget(size, AUTHAPP_BUDGET_BYTES, 'the web authenticator'), {
    message: /^the web authenticator is over its size budget:\n(.|\n)*of a 100\.0 KB budget$/,
  })
})
