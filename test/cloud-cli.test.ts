// The hem-cloud executable: it starts from its flags (the own nats-server, the domain service), says plain
// HTTP and development keys loudly, serves, and stops cleanly on SIGTERM; bad flags are usage errors.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import t from 'tap'
import { main } from '../cli/hem-cloud/index.js'
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
