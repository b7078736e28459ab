import t from 'tap'
import { main, type OwnerCliIo } from '../client/owner-cli.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { bearer } from './helpers/owner.js'

function io(env: Record<string, string> = {}) {
  const out = { stdout: '', stderr: '' }
  const cli: OwnerCliIo = {
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    env,
    askSecret: async () => undefined,
  }
  return { cli, out }
}

const passphrases = { HEM_PASSPHRASE: 'a user passphrase', HEM_MASTER_PASSPHRASE: 'a master passphrase' }

t.test('init and login as a newcomer would, over HTTPS with the device certificate', async (t) => {
  const device = await bootDevice(t, { dataDir: t.testdir() })
  const url = device.httpsUrl!
  const init = io(passphrases)
  t.equal(await main(['init', '--url', url, '--insecure', '--user', 'Ada', '--email', 'ada@example.com'], init.cli), 0, init.out.stderr)
  t.match(JSON.parse(init.out.stdout), { instanceid: /^[0-9a-f]{32}$/, token: String })
  t.notMatch(init.out.stdout + init.out.stderr, /a user passphrase|a master passphrase/, 'no passphrase is echoed')

  const user = io(passphrases)
  t.equal(await main(['login', '--url', url, '--insecure', '--scope', 'system:config'], user.cli), 0, user.out.stderr)
  const config = await call(`${url}/api/system/config`, { headers: bearer(user.out.stdout.trim()) })
  t.equal(config.status, 200)
  t.equal(config.json.user, 'Ada')
  t.equal(config.json.storage_mode, 0x51, 'P defaults for the disk fields')

  const master = io(passphrases)
  t.equal(await main(['login', '--url', url, '--insecure', '--master', '--scope', 'logger:get'], master.cli), 0)
  const claims = JSON.parse(Buffer.from(master.out.stdout.trim().split('.')[1]!, 'base64url').toString())
  t.match(claims, { sub: 'M', scope: 'logger:get' })

  const wrong = io({ HEM_PASSPHRASE: 'not it' })
  t.equal(await main(['login', '--url', url, '--insecure'], wrong.cli), 1)
  t.match(wrong.out.stderr, /answered 401/)
  const untrusted = io(passphrases)
  t.equal(await main(['login', '--url', url], untrusted.cli), 1, 'the self-signed certificate is refused without --insecure')
})

t.test('usage errors exit 2 and say why', async (t) => {
  for (const [argv, message] of [
    [['init', '--user', 'x'], /--user and --email/],
    [['frobnicate'], /unknown command/],
    [['login', '--lifetime', 'soon'], /--lifetime/],
    [['login', '--bogus'], /Unknown option/],
  ] as const) {
    const run = io()
    t.equal(await main([...argv], run.cli), 2, argv.join(' '))
    t.match(run.out.stderr, message)
  }
  const noSecret = io()
  t.equal(await main(['login', '--url', 'http://127.0.0.1:9'], noSecret.cli), 2, 'no passphrase and no terminal')
  t.match(noSecret.out.stderr, /HEM_PASSPHRASE/)
  const help = io()
  t.equal(await main(['--help'], help.cli), 0)
  t.match(help.out.stdout, /never taken from the command line/)
})
