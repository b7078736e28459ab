import { TypeCompiler } from '@sinclair/typebox/compiler'
import t from 'tap'
import { services } from '../bus/services.js'
import { authorized, roleOf, scopeSatisfies } from '../protocol/scopes.js'
import { originAllowed } from '../gateway/cors.js'
import { routeTable } from '../gateway/routes.js'
import { Router } from '../gateway/router.js'
import { hostWithoutPort, isoSeconds } from '../gateway/status.js'
import type { Route } from '../gateway/types.js'

const KID = '0123456789abcdef0123456789abcdef'

function route(path: string, extra: Partial<Route> = {}): Route {
  return {
    method: 'GET',
    path,
    variants: ['P', 'E'],
    auth: 'token',
    tls: 'any',
    handler: { kind: 'command', service: 'test', op: path },
    ...extra,
  }
}

t.test('plain scopes match by prefix on : boundaries', async (t) => {
  t.ok(scopeSatisfies('storage:disk0', 'storage:disk0', {}))
  t.ok(scopeSatisfies('storage:disk0:rw', 'storage:disk0', {}))
  t.ok(scopeSatisfies('system:config', 'system', {}))
  t.notOk(scopeSatisfies('storage:disk01', 'storage:disk0', {}))
  t.notOk(scopeSatisfies('storage', 'storage:disk0', {}))
  t.notOk(scopeSatisfies('logger:get', 'system:config', {}))
  t.notOk(scopeSatisfies('', 'system:config', {}))
})

t.test('a scope ending in <name> needs exactly that scope with the value filled in', async (t) => {
  t.ok(scopeSatisfies(`keymgmt:use:${KID}`, 'keymgmt:use:<kid>', { kid: KID }))
  t.ok(
    scopeSatisfies(`keymgmt:use:${KID.toUpperCase()}`, 'keymgmt:use:<kid>', { kid: KID }),
    'key ids compare in any case',
  )
  t.notOk(scopeSatisfies(`keymgmt:use:${KID}:x`, 'keymgmt:use:<kid>', { kid: KID }), 'no prefix match')
  t.notOk(scopeSatisfies('keymgmt:use', 'keymgmt:use:<kid>', { kid: KID }))
  t.notOk(scopeSatisfies(`keymgmt:use:${KID}`, 'keymgmt:use:<kid>', { kid: 'ffffffffffffffffffffffffffffffff' }))
  t.notOk(scopeSatisfies(`keymgmt:use:${KID}`, 'keymgmt:use:<kid>', {}), 'no value, no match')
  t.notOk(scopeSatisfies('keymgmt:use:', 'keymgmt:use:<kid>', { kid: '' }))
  t.notOk(scopeSatisfies(`keymgmt:use:${KID}`, 'keymgmt:use:<kid>', { kid: 42 }))
  t.notOk(scopeSatisfies(`KEYMGMT:USE:${KID}`, 'keymgmt:use:<kid>', { kid: KID }), 'the fixed part is case-sensitive')
})

t.test('roles and scopes from the route', async (t) => {
  t.equal(roleOf({ sub: 'U', scope: '' }), 'U')
  t.equal(roleOf({ sub: 'M', scope: '' }), 'M')
  t.equal(roleOf({ sub: 'ext-1', scope: '' }), 'ExtAuth')
  const cipher = route('/x', { scopes: ['keymgmt:use:<kid>'], roles: ['U', 'ExtAuth'] })
  t.ok(authorized(cipher, { sub: 'U', scope: `keymgmt:use:${KID}` }, { kid: KID }))
  t.ok(authorized(cipher, { sub: 'ext-1', scope: `keymgmt:use:${KID}` }, { kid: KID }))
  t.notOk(authorized(cipher, { sub: 'M', scope: `keymgmt:use:${KID}` }, { kid: KID }), 'master refused')
  const config = route('/y', { scopes: ['system:config', 'auth:ext:pair', 'logger:get'] })
  t.ok(authorized(config, { sub: 'M', scope: 'logger:get' }, {}), 'any one scope of the list')
  t.notOk(authorized(config, { sub: 'M', scope: 'storage:disk0' }, {}))
  t.ok(authorized(route('/z'), { sub: 'M', scope: 'anything' }, {}), 'no lists: any valid token')
})

t.test('a deferred KID: the gateway checks the kind of scope, the key store the KID', async (t) => {
  const cipher = route('/x', { scopes: ['keymgmt:use:<kid>'], roles: ['U', 'ExtAuth'] })
  const user = (scope: string) => ({ sub: 'U', scope })
  t.ok(authorized(cipher, user(`keymgmt:use:${KID}`), {}, true), 'no KID known yet: a use scope passes')
  t.ok(authorized(cipher, user('keymgmt:use:0123'), { kid: 'not hex' }, true), 'a malformed KID is the actor’s 400')
  t.notOk(authorized(cipher, user('logger:get'), {}, true), 'another kind of scope is refused at once')
  t.notOk(authorized(cipher, user('keymgmt:list'), {}, true), 'another keymgmt scope too')
  t.notOk(authorized(cipher, user(`keymgmt:use:${KID}`), {}), 'without deferral a missing KID fails')
  t.notOk(authorized(cipher, user('keymgmt:use:0123'), { kid: KID }, true), 'a known KID is compared exactly')
})

t.test('CORS origin matching', async (t) => {
  t.ok(originAllowed('*', 'https://anything.test'))
  t.ok(originAllowed('*', 'null'))
  t.ok(originAllowed('https://app.example.com', 'https://app.example.com'))
  t.notOk(originAllowed('https://app.example.com', 'http://app.example.com'))
  t.notOk(originAllowed('https://app.example.com', 'https://app.example.com:8443'))
  t.ok(originAllowed('*.example.com', 'https://app.example.com'))
  t.ok(originAllowed('*.example.com', 'http://a.b.example.com:8080'))
  t.ok(originAllowed('*.Example.COM', 'https://app.example.com'))
  t.notOk(originAllowed('*.example.com', 'https://example.com'), 'the bare domain is not a subdomain')
  t.notOk(originAllowed('*.example.com', 'https://evilexample.com'))
  t.notOk(originAllowed('*.example.com', 'https://example.com.evil.test'))
  t.notOk(originAllowed('*.example.com', 'null'))
})

t.test('router: literal beats parameter, variants and methods filter, params decode', async (t) => {
  const list = route('/api/logger/list', { variants: ['P'] })
  const file = route('/api/logger/:id', { variants: ['P'] })
  const post = route('/api/system/config', { method: 'POST' })
  const routes = [file, list, post]
  const p = new Router(routes, 'P')
  t.equal(p.match('GET', '/api/logger/list')?.route, list)
  t.same(p.match('GET', '/api/logger/65a1b2c3'), { route: file, params: { id: '65a1b2c3' } })
  t.same(p.match('GET', '/api/logger/a%20b')?.params, { id: 'a b' })
  t.equal(p.match('GET', '/api/logger/%zz'), undefined, 'undecodable parameter')
  t.equal(p.match('GET', '/api/logger/'), undefined, 'empty parameter')
  t.equal(p.match('GET', '/api/logger/list/0'), undefined)
  t.equal(p.match('POST', '/api/system/config')?.route, post)
  t.equal(p.match('GET', '/api/system/config'), undefined, 'wrong method is a miss')
  t.equal(p.match('post', '/api/system/config'), undefined, 'methods are case-sensitive')
  const e = new Router(routes, 'E')
  t.equal(e.match('GET', '/api/logger/list'), undefined, 'P-only route on E')
  t.equal(e.match('POST', '/api/system/config')?.route, post)
})

// The bus permissions behind the routes: test/gateway-bus-permissions.test.ts.
t.test('route table: unique, every protected route with its scopes', async (t) => {
  const paths = routeTable.map((r) => `${r.method} ${r.path}`)
  t.equal(new Set(paths).size, paths.length, 'no route twice')
  for (const r of routeTable) {
    if (r.auth === 'token') t.ok(r.scopes?.length && r.roles?.length, `${r.path}: scopes and roles`)
    if (r.method === 'POST' && r.handler.kind !== 'upload') t.ok(r.body, `${r.path}: a body schema`)
  }
  t.same(
    routeTable.filter((r) => r.variants.length === 1).map((r) => r.path),
    [
      '/api/system/config/attestation',
      '/api/system/config/provisioning',
      '/api/system/upgrade/upload_ui',
      '/api/system/upgrade/check_ui',
      '/api/system/upgrade/install_ui',
      '/api/logger/list',
      '/api/logger/list/:offset',
      '/api/logger/:id',
      '/api/storage/unlock',
      '/api/storage/unlock/ro',
      '/api/storage/unlock/rw',
      '/api/storage/lock',
    ],
    'P-only routes (contract §1: storage, logger list and file, attestation, provisioning, management-app upgrade)',
  )
})

// The gateway compiles a body schema at its route's first body, not at start: a schema that cannot compile
// would otherwise show only then.
t.test('route table: every body schema compiles', async (t) => {
  for (const { method, path, body } of routeTable)
    if (body) t.doesNotThrow(() => TypeCompiler.Compile(body), `${method} ${path}`)
})

t.test('time and host helpers', async (t) => {
  t.equal(isoSeconds(Date.UTC(2026, 10, 22, 0, 37, 13, 999)), '2026-11-22T00:37:13Z')
  t.equal(hostWithoutPort('hem.local:8443'), 'hem.local')
  t.equal(hostWithoutPort('hem.local'), 'hem.local')
  t.equal(hostWithoutPort('[fe80::1]:443'), '[fe80::1]')
  t.equal(hostWithoutPort('[fe80::1]'), '[fe80::1]')
  t.equal(hostWithoutPort(''), '')
})

t.test('deadline classes: bulk storage work is long, login medium, the rest short by default', async (t) => {
  const classOf = (method: string, path: string) =>
    routeTable.find((r) => r.method === method && r.path === path)?.deadline ?? 'short'
  for (const kind of ['fw', 'ui']) {
    for (const step of ['upload', 'check', 'install']) {
      const method = step === 'upload' ? 'POST' : 'GET'
      t.equal(classOf(method, `/api/system/upgrade/${step}_${kind}`), 'long', `${step}_${kind}`)
    }
  }
  t.equal(classOf('POST', '/api/system/config'), 'long', 'a configuration change may wipe or reformat the disks')
  t.equal(classOf('GET', '/api/logger/:id'), 'long', 'a log download')
  t.equal(classOf('POST', '/api/auth/token'), 'medium', 'login, behind its brake')
  t.equal(classOf('GET', '/api/system/config'), 'short')
  t.equal(classOf('POST', '/api/crypto/cipher/encrypt'), 'short')
})
