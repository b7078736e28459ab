import t from 'tap'
import { resolve } from 'node:path'
import { UsageError, parseEndpoint } from '../cli/hemd/endpoint.js'
import { parseHemdArgs, type HemdArgs } from '../cli/hemd/hemd-cli.js'

t.test('defaults', async (t) => {
  t.same(parseHemdArgs([]), {
    variant: 'P',
    dataDir: resolve('./var/hemd'),
    http: { host: '127.0.0.1', port: 8080 },
    https: { host: '127.0.0.1', port: 8443 },
    split: false,
    logLevel: 'info',
  })
})

t.test('every flag', async (t) => {
  t.same(
    parseHemdArgs([
      '--variant',
      'e',
      '--data',
      '/tmp/x',
      '--http',
      '0.0.0.0:0',
      '--https',
      '[::1]:9443',
      '--nats',
      'nats://127.0.0.1:4222',
      '--tls-cert',
      'c.pem',
      '--tls-key',
      'k.pem',
      '--nbd',
      '127.0.0.1:10809',
      '--split',
      '--log-level',
      'debug',
    ]),
    {
      variant: 'E',
      dataDir: '/tmp/x',
      http: { host: '0.0.0.0', port: 0 },
      https: { host: '::1', port: 9443 },
      natsUrl: 'nats://127.0.0.1:4222',
      tls: { certFile: 'c.pem', keyFile: 'k.pem' },
      nbd: { host: '127.0.0.1', port: 10809 },
      split: true,
      logLevel: 'debug',
    },
  )
  t.same((parseHemdArgs(['--nbd', 'unix:/run/hemd/nbd.sock']) as HemdArgs).nbd, { path: '/run/hemd/nbd.sock' })
  t.same((parseHemdArgs(['--nbd', '[::1]:0']) as HemdArgs).nbd, { host: '::1', port: 0 })
  t.equal((parseHemdArgs(['--bus', '/run/hemd-bus']) as HemdArgs).busDir, '/run/hemd-bus')
  t.equal((parseHemdArgs(['--bus', 'bus']) as HemdArgs).busDir, resolve('bus'), 'a relative --bus is resolved')
  t.same((parseHemdArgs(['--backend', 'nats://fleet.example:7422']) as HemdArgs).backend, {
    url: 'nats://fleet.example:7422',
    domain: 'hem',
  })
  t.same((parseHemdArgs(['--backend', 'tls://10.0.0.1:7422', '--backend-domain', 'fleet-1']) as HemdArgs).backend, {
    url: 'tls://10.0.0.1:7422',
    domain: 'fleet-1',
  })
  t.equal((parseHemdArgs([]) as HemdArgs).backend, undefined, 'no backend unless given')
  t.same(
    (parseHemdArgs(['--backend', 'nats://fleet.example:7422', '--stream-generation', '3']) as HemdArgs).backend,
    { url: 'nats://fleet.example:7422', domain: 'hem', generation: 3 },
    'a later generation of the stream',
  )
  t.equal(parseHemdArgs(['--help']), 'help')
})

t.test('bad input is a usage error naming the flag', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--variant', 'X'], /--variant/],
    [['--http', 'localhost'], /--http must be HOST:PORT/],
    [['--https', '127.0.0.1:70000'], /--https/],
    [['--tls-cert', 'c.pem'], /go together/],
    [['--nats', 'http://x'], /--nats/],
    [['--nats', 'nats://127.0.0.1:4222', '--bus', '/run/hemd-bus'], /exclude each other/],
    [['--log-level', 'loud'], /--log-level/],
    [['--backend', 'http://fleet.example:7422'], /--backend must be a nats:\/\/ or tls:\/\/ URL/],
    [['--backend', 'nats://fleet.example:7422" }'], /--backend must be/],
    [['--backend', 'nats://fleet.example:7422', '--backend-domain', 'a.b'], /--backend-domain/],
    [['--backend-domain', 'hem'], /go with --backend/],
    [['--stream-generation', '2'], /go with --backend/],
    [['--backend', 'nats://fleet.example:7422', '--stream-generation', '1.5'], /--stream-generation must be/],
    [['--backend', 'nats://u:secret@fleet.example:7422', '--bus', '/run/hemd-bus'], /hemd bus-config --backend/],
    [['--backend', 'nats://fleet.example:7422', '--nats', 'nats://127.0.0.1:4222'], /own nats-server/],
    [['extra'], /unexpected argument/],
    [['--nbd', '0.0.0.0:10809'], /loopback only/],
    [['--nbd', '10809'], /--nbd must be HOST:PORT/],
    [['--nbd', `unix:/${'x'.repeat(120)}`], /longer than 107 bytes/],
    [['--diag'], /--diag runs only with --dev-keys/],
    [['--diag', '--dev-keys', '--vendor-key', 'vendor.pem'], /never holds an installation's keys/],
  ]
  for (const [argv, message] of cases) t.throws(() => parseHemdArgs(argv), message, argv.join(' '))
  t.throws(
    () => parseHemdArgs(['--backend', 'http://leaf:s3cret@fleet.example:7422']),
    { message: /^(?!.*s3cret)/ },
    "a refused backend URL is not repeated: it may hold the leaf user's password",
  )
  t.throws(() => parseHemdArgs(['--bogus']), /Unknown option/)
  t.throws(() => parseEndpoint('--http', ':80'), UsageError)
})

t.test('--diag: the DIAG build, on development keys only', async (t) => {
  t.match(parseHemdArgs(['--diag', '--dev-keys']), { diag: true, devKeys: true })
  t.notOk((parseHemdArgs(['--dev-keys']) as HemdArgs).diag, 'never the default')
})

t.test('the hemd launcher, npm start and the node flags constant agree', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const { HEMD_NODE_FLAGS } = await import('../runtime/node-flags.js')
  const flags = HEMD_NODE_FLAGS.join(' ')
  const shebang = (await readFile(new URL('../bin/hemd.ts', import.meta.url), 'utf8')).split('\n')[0]
  t.equal(shebang, `#!/usr/bin/env -S node ${flags}`)
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>
  }
  t.equal(pkg.scripts.start, `node ${flags} dist/bin/hemd.js --dev-keys`, 'npm start is development mode')
})
