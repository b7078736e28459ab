// The hem-cloud executable: it starts from its flags (the own nats-server, the domain service), says plain
// HTTP and development keys loudly, serves, and stops cleanly on SIGTERM; bad flags are usage errors.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import t from 'tap'
import { main } from '../cli/hem-cloud/index.js'
import { storeOf } from '../cli/hem-cloud/serve-options.js'
import { RateLimiter } from '../cloud/rate-limiter.js'
import { distDir, repoRoot } from './helpers/device.js'
import { call } from './helpers/http.js'
import { until } from './helpers/until.js'

const keys = `${repoRoot}deploy/keys`

async function run(...argv: string[]): Promise<{ code: number; err: string }> {
  let err = ''
  const code = await main(argv, { stdout: { write: () => true }, stderr: { write: (s: string) => (err += s) } })
  return { code, err }
}

t.test('usage errors exit 2 before anything starts', async (t) => {
  const base = ['--backend-key', `${keys}/backend-dev.pem`, '--data', t.testdir()]
  t.match(await run('--listen', 'nowhere', ...base), { code: 2, err: /--listen must be HOST:PORT/ })
  t.match(await run('--data', t.testdir()), { code: 2, err: /--backend-key FILE is required/ })
  t.match(await run('--backend-key', `${keys}/backend-dev.pem`), { code: 2, err: /--data DIR .* or --nats URL/ })
  t.match(await run(...base, '--tls-cert', 'x.pem'), { code: 2, err: /go together/ })
  t.match(await run(...base, '--domain', 'ence.do'), { code: 2, err: /--ca-cert, --ca-key and --domain/ })
  t.match(await run(...base, '--replicas', '3'), { code: 2, err: /--replicas goes with --nats/ })
  t.match(await run('--backend-key', `${keys}/vendor-dev.pem`, '--nats', 'http://x'), { code: 2, err: /--nats/ })
  const ca = ['--ca-cert', `${keys}/domain-ca-dev.crt.pem`, '--ca-key', `${keys}/domain-ca-dev.key.pem`]
  t.match(await run(...base, ...ca, '--domain', 'Bad_Zone'), { code: 2, err: /--domain must be a DNS name/ })
  t.match(await run(...base, ...ca, '--domain', 'ence.do', '--predefined', 'No'), { code: 2, err: /not a prefix/ })
  t.match(await run(...base, ...ca, '--domain', 'ence.do', '--authkey', 'short'), { code: 2, err: /8 characters/ })
  t.match(await run(...base, '--factory-ca', 'x.pem'), { code: 2, err: /go with --domain/ })
  t.match(await run(...base, '--public-url', 'ftp://x'), { code: 2, err: /http\(s\)/ })
  t.match(await run(...base, '--public-url', 'not a url'), { code: 2, err: /must be a URL/ })
  t.match(await run(...base, '--tls-cert', '/nowhere/c.pem', '--tls-key', '/nowhere/k.pem'), {
    code: 2,
    err: /cannot read/,
  })
  t.match(await run('--backend-key', `${keys}/factory-ca-dev.key.pem`, '--data', t.testdir()), {
    code: 2,
    err: /not an Ed25519 key/,
  })
})

t.test('hem-cloud serves from its flags, warns of plain HTTP and development keys, stops on SIGTERM', async (t) => {
  const data = t.testdir()
  const child = spawn(
    process.execPath,
    [
      `${distDir}/bin/hem-cloud.js`,
      ...['--listen', '127.0.0.1:0', '--data', data, '--backend-key', `${keys}/backend-dev.pem`],
      ...['--ca-cert', `${keys}/domain-ca-dev.crt.pem`, '--ca-key', `${keys}/domain-ca-dev.key.pem`],
      ...['--domain', 'ence.do', '--predefined', 'my', '--predefined', 'home', '--log-level', 'warn'],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  t.teardown(() => child.kill('SIGKILL'))
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk))
  await until('the banner', () => /listening on (http:\S+)/.test(err))
  const url = /listening on (http:\S+)/.exec(err)![1]!
  t.match(err, /WARNING: PLAIN HTTP/)
  t.match(err, /WARNING: the DEVELOPMENT backend key/)
  t.notMatch(err, /TEST MODE/)
  t.match(await call(`${url}/domain/predefs`), { status: 200, json: { prefix: ['my', 'home'] } })
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  t.same(await exited, [0, null], 'a clean stop')
})

t.test('--nats: a cluster list, its credentials moved from the URL into the connection options', async (t) => {
  t.same(storeOf({ nats: 'nats://cloud:p%2Fw@h1:4222,nats://h2:4222', replicas: '3' }), {
    nats: { url: 'nats://h1:4222,nats://h2:4222', user: 'cloud', pass: 'p/w' },
    replicas: 3,
  })
  t.same(storeOf({ nats: 'nats://h1:4222' }), { nats: { url: 'nats://h1:4222' }, replicas: 1 })
  t.throws(() => storeOf({ nats: 'nats://h1:4222', replicas: '2' }), /1, 3 or 5/)
  t.throws(() => storeOf({ nats: 'nats://h1:4222', data: '/d' }), /exclude/)
})

t.test('the rate limiter forgets clients whose bucket has refilled once it holds too many', async (t) => {
  const limiter = new RateLimiter(20, 2, 2)
  t.equal(limiter.take('a', 0), 0)
  t.equal(limiter.take('a', 0), 0)
  t.equal(limiter.take('a', 0), 1, 'a is limited')
  t.equal(limiter.take('b', 0), 0)
  t.equal(limiter.take('c', 1000), 0, 'a third client: the refilled ones are forgotten')
  t.equal(limiter.take('a', 1000), 0, 'a starts afresh')
})
