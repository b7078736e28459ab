// hemctl takes its connection options before the command as well as after it (`hemctl --url URL
// status`), as git, kubectl and vault take global options, and checks them the same either way.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { main } from '../cli/hemctl/cli.js'
import type { HemctlIo } from '../cli/hemctl/context.js'
import { bootDevice } from './helpers/device.js'

function hemctl(configHome: string) {
  return async (...argv: string[]) => {
    const out = { stdout: '', stderr: '' }
    const io: HemctlIo = {
      stdout: { write: (text: string | Uint8Array) => (out.stdout += String(text)) },
      stderr: { write: (text: string) => (out.stderr += text) },
      env: { XDG_CONFIG_HOME: configHome },
      askSecret: async () => undefined,
      stdin: (async function* () {})(),
      stderrIsTTY: false,
    }
    return { code: await main(argv, io), ...out }
  }
}

const devCaFile = fileURLToPath(new URL('../deploy/keys/factory-ca-dev.crt.pem', import.meta.url))

t.test('before the command or after it: the same device, the same answer', async (t) => {
  const dir = t.testdir()
  const device = await bootDevice(t, { variant: 'E', dataDir: join(dir, 'device') })
  const url = device.httpsUrl!
  const run = hemctl(join(dir, 'config'))
  const after = await run('version', '--url', url, '--insecure')
  t.equal(after.code, 0, 'after the command, as always')
  t.same(await run('--url', url, '--insecure', 'version'), after, 'before it')
  t.same(await run('--insecure', 'version', '--url', url), after, 'some before, some after')
  t.same(await run(`--url=${url}`, '--insecure', 'version'), after, '--url=URL before it')
  const passphraseFile = join(dir, 'passphrase')
  await writeFile(passphraseFile, 'not asked for: version needs no login\n')
  t.same(await run('--passphrase-file', passphraseFile, '--url', url, '--insecure', 'version'), after)
  const json = await run('--url', url, '--insecure', '--json', 'checkin', 'get')
  t.equal(json.code, 0, 'a subcommand of a group gets them too')
  t.match(JSON.parse(json.stdout), { check: /^[\w-]+\.[\w-]+$/ })
})

t.test('checked as after the command, and refused when given on both sides', async (t) => {
  const dir = t.testdir()
  const run = hemctl(join(dir, 'config'))
  const nowhere = ['--url', 'https://127.0.0.1:9']
  for (const [argv, message] of [
    [['--insecure', '--ca', devCaFile, ...nowhere, 'status'], /hemctl status: give --insecure or --ca, not both/],
    [['--url', 'ftp://hem.example', 'status'], /the device URL must be http:\/\/ or https:\/\//],
    [['--insecure=yes', 'status'], /'--insecure' does not take an argument/],
    [[...nowhere, 'trust', 'list'], /hemctl trust list: Unknown option '--url'/],
    [[...nowhere, 'status', '--url', 'https://127.0.0.1:10'], /--url is given before and after the command/],
    [['--json', 'status', '--json', ...nowhere], /--json is given before and after the command/],
    [['--bogus', 'status'], /hemctl: unknown option '--bogus' before the command/],
    [nowhere, /no command given/],
  ] as const) {
    const refused = await run(...argv)
    t.equal(refused.code, 2, argv.join(' '))
    t.match(refused.stderr, message)
  }
  t.match(await run(...nowhere, '--help'), { code: 0, stdout: /^Usage: hemctl \[CONNECTION OPTIONS\] COMMAND/ })
  t.match(await run(...nowhere, 'status'), { code: 3, stderr: /hemctl status: cannot reach the device/ })
  // Before a `--`, where they are still options: after it they would be the URL to forget.
  t.same(await run('--json', 'trust', 'forget', '--', 'https://c.example'), {
    code: 0,
    stdout: `${JSON.stringify({ origin: 'https://c.example', forgotten: false }, null, 2)}\n`,
    stderr: '',
  })
})
