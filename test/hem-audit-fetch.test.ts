// hem-audit fetch against real devices, then the offline commands on what it fetched.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hem-audit/audit-cli.js'
import { api, createKey } from './helpers/keys.js'
import { login, MASTER_PASS, owned, USER_PASS } from './helpers/owner.js'

async function run(argv: string[], env: Record<string, string> = {}) {
  let stdout = ''
  let stderr = ''
  const io = {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env,
    askSecret: async () => undefined,
  }
  const code = await main(argv, io)
  return { code, stdout, stderr }
}

t.test('P: fetch every file and the key, then verify, replay and timeline them', async (t) => {
  // One testdir per test: a second call would empty the device's data dir.
  const root = t.testdir()
  const o = await owned(t, { variant: 'P', dataDir: join(root, 'device') })
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), {
    label: 'audited',
    type: 'SECP256R1',
    mode: 'ExDSA',
  })
  t.equal((await api(`${o.base}/api/storage/unlock/rw`, await login(o.base, 'storage:disk1:rw'))).status, 200)
  await o.device.restart()
  t.equal((await api(`${o.base}/api/storage/lock`, await login(o.base, 'storage:disk0'))).status, 200)

  const out = join(root, 'logs')
  const fetched = await run(['fetch', '--url', o.base, '--out', out], { HEM_PASSPHRASE: USER_PASS })
  t.equal(fetched.code, 0, fetched.stderr)
  const names = (await readdir(out)).sort()
  const logs = names.filter((name) => name.endsWith('.log'))
  t.ok(logs.length >= 2, 'a file per boot')
  t.same(names, [...logs, 'head.json', 'log-key.b64'])
  t.equal(
    await readFile(join(out, 'log-key.b64'), 'utf8'),
    `${Buffer.from(o.device.logPublicKey).toString('base64')}\n`,
  )
  t.match(fetched.stdout, `fetched ${logs.length} log file(s) from ${o.base} into ${out}\n  ${join(out, logs[0]!)}  `)
  t.match(
    fetched.stdout,
    `\nverify with: hem-audit verify --allow-open --key-file ${join(out, 'log-key.b64')} ` +
      `--head ${join(out, 'head.json')} ${out}\n`,
  )
  t.notMatch(fetched.stdout + fetched.stderr, USER_PASS)
  const onDevice = await readFile(join(o.device.dataDir, 'journal', logs[0]!))
  t.same(await readFile(join(out, logs[0]!)), onDevice, 'a closed file is fetched byte for byte')

  const unsigned = await run(['verify', '--allow-open', '--key-file', join(out, 'log-key.b64'), out])
  t.equal(unsigned.code, 1, 'without the signed head, the open tail is unverified')
  const offline = ['--allow-open', '--key-file', join(out, 'log-key.b64'), '--head', join(out, 'head.json'), out]
  const verified = await run(['verify', ...offline])
  t.equal(verified.code, 0, verified.stdout)
  t.match(verified.stdout, /\nboots: 2\n {2}boot 1: [0-9a-f]{8}, \S+ to \S+, closed\n {2}boot 2: /)

  const replayed = await run(['replay', '--json', ...offline])
  t.equal(replayed.code, 0, replayed.stderr)
  const state = JSON.parse(replayed.stdout)
  const listed = (await api(`${o.https}/api/keymgmt/list`, await login(o.base, 'keymgmt:list'))).json.list.find(
    (key: { kid: string }) => key.kid === kid,
  )
  const config = (await api(`${o.base}/api/system/config`, await login(o.base, 'system:config'))).json
  t.match(state, {
    boots: 2,
    variant: 'P',
    personalisation: 'personalised',
    disks: { '0': 'locked', '1': 'locked' },
    upgrades: { fw: 'idle', ui: 'idle' },
    health: { state: 'secure', fls: 0 },
    lifecycle: 'running',
    config: {
      user: config.user,
      email: config.email,
      hostname: config.hostname,
      storage_mode: config.storage_mode,
      uts: config.uts,
    },
    keys: { [kid]: { type: listed.type, created: listed.created, updated: listed.updated } },
  })
  t.equal(listed.type, 'ATT,PKEY,ExDSA,SECP256R1')
  const beforeReboot = JSON.parse(
    (await run(['replay', '--json', '--at', `${logs[0]!.slice(0, 8)}:3`, ...offline])).stdout,
  )
  t.match(beforeReboot, { boots: 1, personalisation: 'fresh' }, 'at the start of the first boot')

  const told = await run(['timeline', ...offline])
  t.equal(told.code, 0, told.stderr)
  t.match(told.stdout.replace(/ +/g, ' '), ` user key generated OK 200 kid=${kid} type=SECP256R1 mode=ExDSA rid=`)
  t.match(told.stdout.replace(/ +/g, ' '), ' user transition disk 1 locked → rw by UNLOCK_RW OK\n')
  t.match(told.stdout.replace(/ +/g, ' '), / user login OK 200 scope=logger:get rid=/)
  t.match(told.stdout.replace(/ +/g, ' '), / master device personalised OK 200 rid=\S+ instanceid=[0-9a-f]{32}\n/)

  await t.test('HTTPS, a passphrase file, and a wrong passphrase', async (t) => {
    const dir = t.testdir({ 'right.txt': `${MASTER_PASS}\n`, 'wrong.txt': 'not the passphrase\n' })
    const untrusted = await run([
      'fetch',
      '--url',
      o.https,
      '--out',
      join(dir, 'again'),
      '--passphrase-file',
      join(dir, 'right.txt'),
    ])
    t.equal(untrusted.code, 1)
    t.match(
      untrusted.stderr,
      new RegExp(
        /^hem-audit fetch: cannot reach the device: .*certificate.* /.source +
          /\(give --ca FILE, or --insecure for a self-signed certificate\)\n$/.source,
      ),
    )
    const again = await run([
      'fetch',
      '--url',
      o.https,
      '--insecure',
      '--out',
      join(dir, 'again'),
      '--passphrase-file',
      join(dir, 'right.txt'),
    ])
    t.equal(again.code, 0, again.stderr)
    t.ok((await readdir(join(dir, 'again'))).length > logs.length, 'the master may read the logs too')
    const wrong = await run(
      ['fetch', '--url', o.base, '--out', join(dir, 'wrong'), '--passphrase-file', join(dir, 'wrong.txt')],
      { HEM_PASSPHRASE: USER_PASS },
    )
    t.equal(wrong.code, 1)
    t.match(wrong.stderr, /^hem-audit fetch: POST \/api\/auth\/token: the device answered 401/)
    t.notMatch(wrong.stderr + wrong.stdout, /not the passphrase/)
  })
})

t.test('E: the key is saved, but there are no files to fetch', async (t) => {
  const root = t.testdir()
  const o = await owned(t, { variant: 'E', dataDir: join(root, 'device') })
  const out = join(root, 'logs')
  const answer = await run(['fetch', '--url', o.base, '--out', out], { HEM_PASSPHRASE: USER_PASS })
  t.equal(answer.code, 1)
  t.equal(answer.stdout, '')
  t.equal(
    answer.stderr,
    'hem-audit fetch: the device lists no log files: an E device serves only its log key, not its files; ' +
      `the log key is saved in ${join(out, 'log-key.b64')}\n`,
  )
  t.equal(
    await readFile(join(out, 'log-key.b64'), 'utf8'),
    `${Buffer.from(o.device.logPublicKey).toString('base64')}\n`,
  )
})

t.test('usage and unreachable devices', async (t) => {
  const dir = t.testdir({ 'pass.txt': 'x' })
  const help = await run(['fetch', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: hem-audit fetch --url URL /)
  const cases: [string[], RegExp][] = [
    [['fetch'], /--url is needed/],
    [['fetch', '--url', 'ftp://device'], /--url must be http:\/\/ or https:\/\//],
    [['fetch', '--url', 'not a url'], /--url: 'not a url' is not a URL/],
    [['fetch', '--url', 'https://u:p@device'], /--url must not carry credentials/],
    [['fetch', '--url', 'https://device', '--insecure', '--ca', 'ca.pem'], /give --insecure or --ca, not both/],
    [['fetch', '--url', 'https://device', '--ca', join(dir, 'missing.pem')], /cannot read the CA file/],
    [['fetch', '--url', 'https://device', 'extra'], /Unexpected argument 'extra'/],
    [['fetch', '--url', 'https://device', '--passphrase', 'secret'], /Unknown option '--passphrase'/],
    [
      ['fetch', '--url', 'https://device'],
      /no passphrase: set HEM_PASSPHRASE, give a passphrase file, or run on a terminal/,
    ],
    [
      ['fetch', '--url', 'https://device', '--passphrase-file', join(dir, 'missing.txt')],
      /cannot read the passphrase file/,
    ],
  ]
  for (const [argv, message] of cases) {
    const answer = await run(argv)
    t.equal(answer.code, 2, argv.join(' '))
    t.match(answer.stderr, message)
    t.match(answer.stderr, /\n\nUsage: hem-audit fetch/)
  }
  const refused = await run([
    'fetch',
    '--url',
    'http://127.0.0.1:9',
    '--out',
    join(dir, 'out'),
    '--passphrase-file',
    join(dir, 'pass.txt'),
  ])
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^hem-audit fetch: cannot reach the device: connect ECONNREFUSED 127\.0\.0\.1:9\n$/)
})
