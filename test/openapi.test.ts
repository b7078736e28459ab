// The OpenAPI document is generated from the route table; deploy/openapi.json must stay that document.
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { openApiDocument } from '../gateway/openapi.js'
import { routeTable } from '../gateway/routes.js'
import { routeReference } from '../deploy/route-reference.js'
import { bootDevice, repoRoot } from './helpers/device.js'
import { call } from './helpers/http.js'

const pkg = JSON.parse(await readFile(`${repoRoot}package.json`, 'utf8')) as { version: string }
const document = openApiDocument(routeTable, pkg.version) as { paths: Record<string, Record<string, any>> }

t.test("deploy/openapi.json is the route table's document (npm run openapi writes it)", async (t) => {
  t.same(JSON.parse(await readFile(`${repoRoot}deploy/openapi.json`, 'utf8')), document)
})

t.test('docs/routes.md renders that document, a row per route (npm run openapi writes it)', async (t) => {
  const reference = await readFile(`${repoRoot}docs/routes.md`, 'utf8')
  t.equal(reference, routeReference(document as Parameters<typeof routeReference>[0]))
  t.equal(reference.split('\n').filter((line) => /^\| (GET|POST|DELETE) /.test(line)).length, routeTable.length)
  t.match(
    reference,
    '| POST `/api/crypto/cipher/encrypt` | P, E | bearer | `keymgmt:use:<kid>` | U, ExtAuth | HTTPS | yes |',
  )
})

t.test('every route, as the gateway treats it', async (t) => {
  const operations = Object.values(document.paths).flatMap((methods) => Object.keys(methods))
  t.equal(operations.length, routeTable.length, 'one operation per route')
  for (const route of routeTable) {
    const op = document.paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()]
    t.ok(op, `${route.method} ${route.path}`)
    t.same(op['x-hem-variants'], route.variants)
    t.same(
      (op.parameters ?? []).map((p: { name: string }) => p.name),
      [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => name),
      'path parameters',
    )
    t.same(
      op.security,
      route.auth === 'open' ? [] : route.auth === 'token' ? [{ bearer: [] }] : [{ bearer: [] }, {}],
      `${route.path}: security`,
    )
    const upload = route.handler.kind === 'upload'
    t.equal('409' in op.responses, route.healthy === true || upload, `${route.path}: 409 where it can be answered`)
    t.equal(
      /fail state/.test(op.responses['409']?.description ?? ''),
      route.healthy === true,
      `${route.path}: the fail state's 409 exactly where it gates`,
    )
    // crypto-contract §0: 406 when an operation fails; a key is only looked up by list, get, delete and search.
    // The external authenticator's answer that fails 406 (ext-auth contract §1.2, §1.5).
    const operation =
      /^\/api\/(crypto\/|keymgmt\/(create|import|derive|update)$)/.test(route.path) ||
      /^\/api\/auth\/ext\/(validate|token)$/.test(route.path) ||
      route.path === '/api/system/restore'
    t.equal('406' in op.responses, operation, `${route.path}: 406 exactly where an operation can fail`)
    t.equal(
      op.responses['200'].description === 'verified (empty body)',
      /^\/api\/crypto\/.*\/verify$/.test(route.path),
      `${route.path}: a verify endpoint's 200 has an empty body`,
    )
    t.equal('411' in op.responses, upload, `${route.path}: 411 for uploads only`)
    t.equal('408' in op.responses, upload || route.body !== undefined, `${route.path}: 408 where a body is read`)
    t.equal('418' in op.responses, route.tls === 'required')
    if (route.handler.kind === 'upload')
      t.ok(op.requestBody.content['application/octet-stream'], 'uploads are octet-stream')
    else
      t.equal(
        op.requestBody?.content['application/json'] !== undefined,
        route.body !== undefined,
        'a JSON body exactly where a schema is',
      )
  }
  const ids = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId))
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
})

t.test('the device serves the document of its own firmware at /api/openapi.json, without a token', async (t) => {
  const dir = t.testdir({ P: {}, E: {} })
  for (const variant of ['P', 'E'] as const) {
    const device = await bootDevice(t, { dataDir: `${dir}/${variant}`, variant })
    const { fwv } = (await call(`${device.httpUrl}/api/system/version`)).json as { fwv: string }
    const served = await call(`${device.httpUrl}/api/openapi.json`)
    t.equal(served.status, 200, `${variant}: 200`)
    t.match(served.headers['content-type'], /^application\/json/, `${variant}: JSON`)
    t.same(
      served.json,
      openApiDocument(routeTable, fwv),
      `${variant}: the route table's document, versioned as the running firmware`,
    )
    t.same((await call(`${device.httpsUrl}/api/openapi.json`)).json, served.json, `${variant}: the same over HTTPS`)
  }
})

t.test('a DIAG build describes its DIAG routes too, each marked DIAG-only; a normal build none', async (t) => {
  t.notOk(
    Object.keys(document.paths).some((path) => path.startsWith('/api/diag/')),
    'no DIAG route in the normal document',
  )
  const device = await bootDevice(t, { dataDir: t.testdir(), variant: 'E', diag: true })
  const served = (await call(`${device.httpUrl}/api/openapi.json`)).json as typeof document
  const diag = Object.entries(served.paths).filter(([path]) => path.startsWith('/api/diag/'))
  t.same(
    diag.map(([path]) => path).sort(),
    [
      '/api/diag/break_temp',
      '/api/diag/break_tls',
      '/api/diag/break_trng',
      '/api/diag/corrupt_repo/{addr}',
      '/api/diag/disable_selftest',
      '/api/diag/memdump/{addr}/{len}',
      '/api/diag/test',
      '/api/diag/test_trng',
      '/api/diag/wipe_config',
    ],
    'every DIAG route',
  )
  for (const [path, methods] of diag) {
    t.match(methods.get, { 'x-hem-diag-only': true, description: /^DIAG build only/, security: [] }, path)
  }
  for (const [path, methods] of Object.entries(document.paths))
    t.same(served.paths[path], methods, `${path} as in the normal document`)
})
