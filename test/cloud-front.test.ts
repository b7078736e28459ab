// hem-cloud's front (ext-auth contract §3.0): exact JSON headers, CORS, the body limit, malformed
// JSON, unknown routes and methods, the rate limit per address, and HTTPS with TLS 1.3.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect as tlsConnect } from 'node:tls'
import t from 'tap'
import { startCloudFront } from '../cloud/cloud-front.js'
import { testCloud } from './helpers/cloud.js'
import { silentLogger } from './helpers/logger.js'
import { call } from './helpers/http.js'
import { rawExchange } from './helpers/raw-http.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'

const request = (path: string, method = 'GET', headers: string[] = [], body = '') =>
  Buffer.from(
    [
      `${method} ${path} HTTP/1.1`,
      'Host: cloud',
      ...headers,
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n'),
  )

t.test('JSON answers: Content-Type and Content-Length spelled exactly so, never chunked, CORS on each', async (t) => {
  const { cloud } = await testCloud(t)
  const target = { port: cloud.port, tls: false }
  const cases: [string, Buffer, number][] = [
    ['a route', request('/domain/predefs'), 200],
    ['an unknown route', request('/nowhere'), 404],
    ['a wrong method', request('/checkin'), 405],
    ['malformed JSON', request('/checkin', 'POST', ['Content-Type: application/json'], '{"check":'), 400],
    ['a bad body', request('/checkin', 'POST', ['Content-Type: application/json'], '{"check":"x"}'), 400],
  ]
  for (const [what, bytes, status] of cases) {
    const { responses } = await rawExchange(target, { steps: [bytes] })
    const answer = responses[0]!
    t.equal(answer.status, status, what)
    const names = answer.headers.map(([name]) => name)
    t.ok(names.includes('Content-Type') && names.includes('Content-Length'), `${what}: exact header names`)
    t.notOk(
      names.some((name) => name.toLowerCase() === 'transfer-encoding'),
      `${what}: not chunked`,
    )
    const header = (name: string) => answer.headers.find(([n]) => n === name)?.[1]
    t.equal(header('Content-Type'), 'application/json', what)
    t.equal(Number(header('Content-Length')), answer.body.length, what)
    t.equal(header('Access-Control-Allow-Origin'), '*', `${what}: CORS`)
    const json = JSON.parse(answer.body.toString())
    if (status >= 400) t.match(json, { error: /^[a-z_]+$/, message: String }, `${what}: {error, message}`)
  }
  const wrongMethod = await call(`${cloud.url}/checkin`)
  t.equal(wrongMethod.headers.allow, 'POST, OPTIONS', '405 names the methods')
})

t.test('CORS preflight on any route', async (t) => {
  const { cloud } = await testCloud(t)
  const answer = await call(`${cloud.url}/checkin`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
  })
  t.equal(answer.status, 204)
  t.match(answer.headers, {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers': 'Content-Type',
  })
})

t.test('413 above 16 KiB: by Content-Length before the body, or while a chunked body arrives', async (t) => {
  const { cloud } = await testCloud(t)
  const target = { port: cloud.port, tls: false }
  const head = 'POST /checkin HTTP/1.1\r\nHost: cloud\r\nContent-Type: application/json\r\n'
  const declared = await rawExchange(target, { steps: [Buffer.from(`${head}Content-Length: 16385\r\n\r\n`)] })
  t.equal(declared.responses[0]?.status, 413, 'answered without a byte of the body')
  const chunk = 'x'.repeat(8192)
  const chunked = await rawExchange(target, {
    steps: [Buffer.from(`${head}Transfer-Encoding: chunked\r\n\r\n${`2000\r\n${chunk}\r\n`.repeat(3)}`)],
  })
  t.equal(chunked.responses[0]?.status, 413, 'a chunked body past the limit')
  const atLimit = `{"check":"${'x'.repeat(16 * 1024 - 12)}"}`
  t.equal(Buffer.byteLength(atLimit), 16 * 1024)
  const fits = await call(`${cloud.url}/checkin`, { method: 'POST', body: atLimit })
  t.equal(fits.status, 400, 'exactly 16 KiB is read (and then refused for its content)')
})

t.test('rate limit per address: a burst of 100, then 429 with Retry-After until time refills it', async (t) => {
  const test = await testCloud(t)
  const url = `${test.cloud.url}/domain/predefs`
  for (let i = 0; i < 100; i++) {
    const answer = await call(url)
    if (answer.status !== 200) t.fail(`request ${i + 1}: ${answer.status}`)
  }
  const limited = await call(url)
  t.equal(limited.status, 429)
  t.equal(limited.headers['retry-after'], '1')
  t.equal(limited.json.error, 'too_many_requests')
  t.equal((await call(url, { localAddress: '127.0.0.2' })).status, 200, 'another address is not limited')
  test.clock.ms += 1000
  for (let i = 0; i < 20; i++) t.equal((await call(url)).status, 200, `refilled at 20/s: ${i + 1}`)
  t.equal((await call(url)).status, 429, 'and no more')
})

t.test('HTTPS: TLS 1.3 works; older versions are refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hem-cloud-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeSelfSignedCert('api.encedo.com', join(dir, 'cert.pem'), join(dir, 'key.pem'))
  const tls = { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') }
  const { cloud } = await testCloud(t, { tls })
  t.match(cloud.url, /^https:/)
  const handshake = (version: 'TLSv1.2' | 'TLSv1.3') =>
    new Promise<string>((resolve) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port: cloud.port, rejectUnauthorized: false, minVersion: version, maxVersion: version },
        () => {
          resolve(socket.getProtocol() ?? '')
          socket.destroy()
        },
      )
      socket.on('error', () => resolve('refused'))
    })
  t.equal(await handshake('TLSv1.3'), 'TLSv1.3')
  t.equal(await handshake('TLSv1.2'), 'refused')
  t.equal((await call(`${cloud.url}/domain/predefs`)).status, 200, 'a request over HTTPS')
})

t.test('a handler that does not answer within the deadline: 503 timeout, and the front goes on', async (t) => {
  const front = await startCloudFront({
    host: '127.0.0.1',
    port: 0,
    clock: Date.now,
    logger: silentLogger,
    limits: { handlerMs: 100 },
  })
  t.teardown(() => front.close())
  front.mount([
    { method: 'GET', pattern: '/hang', handler: () => new Promise(() => undefined) },
    { method: 'GET', pattern: '/ok/:name', handler: async (req) => ({ status: 200, body: req.params }) },
  ])
  t.match(await call(`${front.url}/hang`), { status: 503, json: { error: 'timeout' } })
  t.match(await call(`${front.url}/ok/a%20b`), { status: 200, json: { name: 'a b' } }, 'parameters percent-decoded')
  t.equal((await call(`${front.url}/ok/`)).status, 404, 'an empty parameter matches nothing')
})

t.test('before its routes are mounted: 503 unavailable with Retry-After, never 404', async (t) => {
  const front = await startCloudFront({ host: '127.0.0.1', port: 0, clock: Date.now, logger: silentLogger })
  t.teardown(() => front.close())
  const early = await call(`${front.url}/notify/event/data/allbypid`, { method: 'POST', body: '{}' })
  t.match(early, { status: 503, json: { error: 'unavailable' } }, 'the client is told to come back')
  t.equal(early.headers['retry-after'], '1')
  front.mount([{ method: 'GET', pattern: '/ok', handler: async () => ({ status: 200, body: {} }) }])
  t.equal((await call(`${front.url}/ok`)).status, 200, 'served once mounted')
  t.equal((await call(`${front.url}/nothing`)).status, 404, 'and an unknown route is 404 again')
})
