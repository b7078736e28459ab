// hemctl's system commands against real devices, run in-process: what they print, their exit
// statuses, and trust on first use of the device's certificate.
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { signAttestation } from '../factory/sign-attestation.js'
import { PinStore } from '../client/pin-store.js'
import { main } from '../cli/hemctl/cli.js'
import type { HemctlIo } from '../cli/hemctl/context.js'
import { bootDevice } from './helpers/device.js'
import { boots } from './helpers/model-device.js'
import { until } from './helpers/until.js'

const USER_PASS = 'a user passphrase for hemctl'
const MASTER_PASS = 'a master passphrase for hemctl'

interface Run {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs hemctl in-process with the owner's passphrases and its own config dir. `typed` are the
 * answers on the terminal, in turn; the prompts asked are pushed to `prompts`.
 */
function hemctl(configHome: string, env: Record<string, string> = {}, typed: string[] = [], prompts: string[] = []) {
  return async (...argv: string[]): Promise<Run> => {
    const out = { stdout: '', stderr: '' }
    const io: HemctlIo = {
      stdout: { write: (text: string) => (out.stdout += text) },
      stderr: { write: (text: string) => (out.stderr += text) },
      env: { HEM_PASSPHRASE: USER_PASS, HEM_MASTER_PASSPHRASE: MASTER_PASS, XDG_CONFIG_HOME: configHome, ...env },
      askSecret: async (prompt) => {
        prompts.push(prompt)
        return typed.shift()
      },
      stdin: (async function* () {})(),
      stderrIsTTY: false,
    }
    return { code: await main(argv, io), ...out }
  }
}

const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
const secrets = new RegExp(`${USER_PASS}|${MASTER_PASS}|not the passphrase`)

const devCaFile = fileURLToPath(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url))
const devCa = {
  key: createPrivateKey(readFileSync(new URL('../deploy/keys/factory-ca-dev.key.pem', import.meta.url), 'utf8')),
  cert: new Uint8Array(new X509Certificate(readFileSync(devCaFile)).raw),
}
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

t.test('--help for every command, and usage errors before any connection', async (t) => {
  const dir = t.testdir()
  const run = hemctl(join(dir, 'config'))
  const commands = [
    'init',
    'login',
    'status',
    'version',
    'config',
    'config get',
    'config set',
    'attest',
    'provision',
    'selftest',
    'reboot',
    'shutdown',
    'wipeout',
  ]
  for (const command of [...commands, 'trust', 'trust list', 'trust forget']) {
    const help = await run(...command.split(' '), '--help')
    t.equal(help.code, 0, `${command} --help`)
    t.match(help.stdout, new RegExp(`^Usage: hemctl ${command}`), `${command}: its usage`)
  }
  t.match(await run('--help'), { code: 0, stdout: /init[\s\S]*config[\s\S]*trust/ })

  const nowhere = ['--url', 'https://127.0.0.1:9']
  for (const [argv, message] of [
    [['status', '--bogus'], /Unknown option '--bogus'/],
    [['config', 'frobnicate'], /unknown command 'frobnicate'/],
    [['wipeout', ...nowhere], /give --yes/],
    [['shutdown', ...nowhere], /give --yes/],
    [['config', 'set', ...nowhere], /FIELD=VALUE/],
    [['config', 'set', 'user', ...nowhere], /"user" is not FIELD=VALUE/],
    [['config', 'set', 'user=Ada', 'wipeout=true', ...nowhere], /hemctl wipeout --yes/],
    [['init', '--user', 'Ada', ...nowhere], /--user and --email/],
    [['login', '--lifetime', 'soon', ...nowhere], /--lifetime must be a whole number/],
    [['login', '--lifetime', '0', ...nowhere], /at least 1 second/],
    [['init', '--user', 'Ada', '--email', 'ada@example.com', '--master', ...nowhere], /--master does not apply/],
    [['trust', 'forget', 'https://a.example', '--url', 'https://b.example'], /give one URL/],
    [['provision', ...nowhere], /give one FILE/],
    [['trust', 'forget', 'not a url'], /is not a URL/],
    [['login', '--lifetime', ' ', ...nowhere], /--lifetime must be a whole number/],
    [['status', '--insecure', '--ca', devCaFile, ...nowhere], /give --insecure or --ca, not both/],
    // No --url and no $HEM_URL: the default device, whose CA file is read first.
    [['status', '--ca', join(dir, 'missing.pem')], /cannot read the CA file: ENOENT/],
    [['status', '--url', 'ftp://hem.example'], /the device URL must be http:\/\/ or https:\/\//],
    [['logs', 'verify', 'one', 'two'], /one DIR, not 2/],
  ] as const) {
    const usage = await run(...argv)
    t.equal(usage.code, 2, argv.join(' '))
    t.match(usage.stderr, message)
  }
  const noSecret = await hemctl(join(dir, 'config'), { HEM_PASSPHRASE: '' })('login', ...nowhere)
  t.match(noSecret, { code: 2, stderr: /HEM_PASSPHRASE/ }, 'no passphrase and no terminal')
  const notJson = join(dir, 'answer.json')
  await writeFile(notJson, '{"crt":')
  t.match(await run('provision', notJson, ...nowhere), { code: 2, stderr: /does not hold a JSON object/ })
  t.match(await run('status', ...nowhere), { code: 3, stderr: /cannot reach the device/ })
  t.match(await run('status', '--ca', devCaFile, ...nowhere), { code: 3, stderr: /cannot reach the device/ }, 'a CA')
  t.match(await run('trust', 'forget'), { code: 0, stdout: 'No certificate was pinned for https://127.0.0.1:8443.\n' })
  t.match(await hemctl(join(dir, 'config'), { HEM_URL: 'https://hem.example:9443' })('trust', 'forget'), {
    code: 0,
    stdout: 'No certificate was pinned for https://hem.example:9443.\n',
  })
})

t.test('P over HTTPS with a pinned certificate: a whole life, from fresh to wiped out', async (t) => {
  // t.testdir() makes its dir afresh at each call: one per test, shared out.
  const dir = t.testdir()
  const device = await bootDevice(t, { variant: 'P', dataDir: join(dir, 'device') })
  const url = device.httpsUrl!
  const origin = new URL(url).origin
  const configHome = join(dir, 'config')
  const run = hemctl(configHome)
  const at = (...argv: string[]) => run(...argv, '--url', url)

  t.match(await at('version'), { code: 0, stdout: /^hwv: \S*PPA/m })
  t.match(JSON.parse((await at('version', '--json')).stdout), { hwv: /PPA/, fwv: String })
  t.match(await at('status'), { code: 0, stdout: /^inited: false$/m })
  const pinned = await run('trust', 'list')
  t.match(
    pinned.stdout,
    new RegExp(`^${origin}  ([0-9A-F]{2}:){31}[0-9A-F]{2}\n$`),
    'the first connection pinned the certificate',
  )
  t.same(Object.keys(JSON.parse((await run('trust', 'list', '--json')).stdout)), [origin])

  // Fresh: attestation, provisioning and the self-test need no login.
  const request = JSON.parse((await at('attest', '--json')).stdout) as { csr: string; genuine: string }
  t.match(request, { csr: String, genuine: String })
  const signed = await signAttestation(
    { csr: Buffer.from(request.csr, 'base64'), genuine: Buffer.from(request.genuine, 'base64') },
    devCa,
  )
  const answerFile = join(dir, 'factory-answer.json')
  await writeFile(answerFile, JSON.stringify({ crt: b64(signed.crt), genuine: b64(signed.genuine) }))
  t.match(await at('provision', answerFile), { code: 0, stdout: 'The device is provisioned.\n' })
  t.match(await at('provision', answerFile), { code: 1, stderr: /answered 406/ }, 'provisioned once only')
  t.match(await at('attest'), { code: 0, stdout: /^crt: /m })
  t.match(JSON.parse((await at('selftest', '--json')).stdout), {
    fls_state: 0,
    repo_stats: { invalid: 0 },
    se_state: 0,
  })

  const init = await at('init', '--user', 'Ada', '--email', 'ada@example.com', '--disk0-sectors', '131072')
  t.equal(init.code, 0, init.stderr)
  t.match(init.stdout, /^instanceid: [0-9a-f]{32}\n[\s\S]*personalised[\s\S]*hemctl login/)
  t.notMatch(init.stdout, /token|eyJ/, 'the init token is not shown without --json')
  t.notMatch(init.stdout + init.stderr, secrets)
  t.match(
    await at('init', '--user', 'Eve', '--email', 'eve@example.com'),
    { code: 1, stderr: /answered 406/ },
    'a second owner is refused',
  )

  const login = await at('login')
  t.equal(login.code, 0, login.stderr)
  t.match(claims(login.stdout.trim()), { sub: 'U', scope: 'system:config' })
  const before = Math.floor(Date.now() / 1000)
  const master = JSON.parse(
    (await at('login', '--master', '--scope', 'logger:get', '--lifetime', '600', '--json')).stdout,
  ) as { token: string }
  const after = Math.ceil(Date.now() / 1000)
  const masterClaims = claims(master.token)
  t.match(masterClaims, { sub: 'M', scope: 'logger:get' })
  // The client sets exp (its clock plus the lifetime), the device iat (its clock, after the
  // login's 500 ms floor): both clocks are the host's, read between before and after.
  const exp = Number(masterClaims.exp)
  t.ok(exp >= before + 600 && exp <= after + 600, `exp: the lifetime asked for (${exp - before} s)`)
  t.ok(Number(masterClaims.iat) >= before && Number(masterClaims.iat) <= after, 'iat: the time of the login')
  const wrong = await hemctl(configHome, { HEM_PASSPHRASE: 'not the passphrase' })('login', '--url', url)
  t.match(wrong, { code: 4, stdout: '', stderr: /answered 401/ })
  t.notMatch(login.stderr + wrong.stdout + wrong.stderr, secrets, 'no passphrase is echoed')

  t.notMatch((await at('status')).stdout, /inited/, 'personalised')
  t.match(await at('config', 'get'), { code: 0, stdout: /^user: Ada$/m })
  const set = await at(
    'config',
    'set',
    'user=Grace Hopper',
    'http_option_hsts=true',
    'http_option_dosprot_mode=20',
    '--json',
  )
  t.equal(set.code, 0, set.stderr)
  t.match(JSON.parse(set.stdout), { updated: true })
  t.match(JSON.parse((await at('config', 'get', '--json')).stdout), {
    user: 'Grace Hopper',
    http_option_hsts: true,
    http_option_dosprot_mode: 20,
    storage_disk0size: 131072,
  })
  const bad = await at('config', 'set', 'storage_mode=7')
  t.match(
    bad,
    { code: 1, stderr: /^hemctl config set: POST \/api\/system\/config: the device answered 400 \(.+\)\n$/ },
    "the device's message",
  )

  t.match(await at('attest', '--json'), { code: 0, stdout: /"crt"/ }, 'attestation of a personalised device, logged in')
  t.match(await at('selftest'), { code: 0, stdout: /^fls_state: 0$/m })
  const bootsBefore = await boots(device.dataDir)
  t.match(await at('reboot'), { code: 0, stdout: 'The device is rebooting.\n' })
  // The boot before may still answer a moment after the order: up means the new boot's start is journaled.
  await until(
    'up after the reboot',
    async () => (await boots(device.dataDir)) > bootsBefore && (await at('status')).code === 0,
  )

  // Another certificate for the pinned origin: refused before anything is sent.
  const store = PinStore.inConfigDir(join(configHome, 'hemctl'))
  const genuine = await store.get(origin)
  await store.set(origin, Array.from({ length: 32 }, () => 'AB').join(':'))
  const changed = await at('status')
  t.equal(changed.code, 5)
  t.match(
    changed.stderr,
    new RegExp(`certificate of ${origin} changed: pinned SHA-256 (AB:){31}AB, presented ${genuine}`),
  )
  t.match(await at('config', 'get'), { code: 5 }, 'before any login')
  t.match(await run('trust', 'forget', url), { code: 0, stdout: `Forgot the certificate pinned for ${origin}.\n` })
  t.match(await run('trust', 'forget', '--url', url), { code: 0, stdout: `No certificate was pinned for ${origin}.\n` })
  t.match(await at('status'), { code: 0 }, 'pinned anew')
  t.equal(await store.get(origin), genuine)

  t.match(await at('wipeout', '--yes'), { code: 0, stdout: /wiping out/ })
  await until('fresh after the wipeout', async () => /^inited: false$/m.test((await at('status')).stdout), 30_000)
})

t.test(
  'E: no attestation, no disk options, passphrases typed twice, the init token with --json, shutdown',
  async (t) => {
    const dir = t.testdir()
    const device = await bootDevice(t, { variant: 'E', dataDir: join(dir, 'device') })
    const config = join(dir, 'config')
    const env = { HEM_URL: device.httpsUrl!, HEM_PASSPHRASE: '', HEM_MASTER_PASSPHRASE: '' }
    const run = hemctl(config, env)
    const args = ['--insecure', '--user', 'Ada', '--email', 'ada@example.com']
    t.match(await run('attest', '--insecure'), { code: 1, stderr: /answered 404/ })
    t.match(await run('init', ...args, '--ip', '10.0.0.1/8'), { code: 2, stderr: /--ip only apply to P/ })
    t.match(await hemctl(config, env, [USER_PASS, 'a typo'])('init', ...args), {
      code: 2,
      stderr: /the user passphrases typed differ/,
    })

    const prompts: string[] = []
    const init = await hemctl(
      config,
      env,
      [USER_PASS, USER_PASS, MASTER_PASS, MASTER_PASS],
      prompts,
    )('init', ...args, '--json')
    t.equal(init.code, 0, init.stderr)
    t.same(prompts, [
      'New user passphrase: ',
      'Repeat the new user passphrase: ',
      'New master passphrase: ',
      'Repeat the new master passphrase: ',
    ])
    const answer = JSON.parse(init.stdout) as { instanceid: string; token: string }
    t.match(answer, { instanceid: /^[0-9a-f]{32}$/, token: String })
    t.match(claims(answer.token), { sub: 'U', scope: 'system:config' })
    t.notMatch(init.stdout + init.stderr, secrets)
    t.match(await run('trust', 'list'), { code: 0, stdout: 'No certificate is pinned.\n' }, '--insecure pins nothing')

    const passphraseFile = join(dir, 'master-passphrase')
    await writeFile(passphraseFile, `${MASTER_PASS}\n`)
    t.match(await run('shutdown', '--yes', '--insecure', '--master', '--passphrase-file', passphraseFile, '--json'), {
      code: 0,
      stdout: '{}\n',
    })
    await device.stopped
    t.match(await run('status', '--insecure'), { code: 3, stderr: /cannot reach the device/ })
  },
)
