// An installation runs with its own keys: install.sh refuses the published development keys,
// hemd without --dev-keys refuses to start without keys, and development mode says so.
import { spawn } from 'node:child_process'
import { access, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { repoRoot } from './helpers/device.js'
import { hemdBin, runHemd, runToEnd } from './helpers/hemd-process.js'
import {
  operatorCheckout,
  type OperatorCheckout,
  operatorKeys,
  publishedKeyFiles,
} from './helpers/operator-checkout.js'

const devKeys = join(repoRoot, 'deploy', 'keys')
const top = t.testdir()
let checkout: Promise<OperatorCheckout> | undefined
const prepared = () => (checkout ??= operatorCheckout(join(top, 'checkout')))

function install(script: string, staging: string, ...extra: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // Never without --root: the script would install onto this host.
    const child = spawn('bash', [script, '--root', staging, '--no-apt', '--no-user', '--no-systemctl', ...extra], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c))
    child.once('exit', (code) => resolve({ code, out }))
  })
}

t.test('install.sh refuses the development keys, in any wrapping, and installs nothing then', async (t) => {
  const { installScript, keys } = await prepared()
  const own = { '--backend-key': keys.backendKey, '--vendor-key': keys.vendorKey, '--factory-ca': keys.factoryCa }
  // deploy/keys/'s published keys as an operator could be handed them.
  const published = await publishedKeyFiles(join(top, 'published'))
  const refused: [string, string, string][] = [
    ['--backend-key', published.backendKey, 'the public half'],
    ['--vendor-key', published.vendorKey, 'the public half'],
    ['--factory-ca', published.factoryCa, 'the certificate of deploy/keys/'],
    ['--factory-ca', published.reissuedFactoryCa, 'a certificate re-issued from its key'],
  ]
  for (const [index, [flag, file, what]] of refused.entries()) {
    const staging = join(top, `dev${index}`)
    const args = Object.entries({ ...own, [flag]: file }).flat()
    const { code, out } = await install(installScript, staging, ...args)
    t.equal(code, 1, `${flag}, ${what}: refused`)
    t.match(out, new RegExp(`install: ${flag} \\S+ holds a development key of deploy/keys/ \\(sha256 [0-9a-f]{64}\\)`))
    t.match(out, /its private half is published/)
    await t.rejects(access(join(staging, 'opt', 'hemd')), 'nothing is installed')
  }
  const secret = await install(
    installScript,
    join(top, 'private'),
    ...Object.entries({ ...own, '--vendor-key': join(devKeys, 'vendor-dev.pem') }).flat(),
  )
  t.equal(secret.code, 1)
  t.match(secret.out, /--vendor-key \S+vendor-dev\.pem is a private key: give its public half/)
  const none = await install(installScript, join(top, 'none'))
  t.equal(none.code, 1)
  t.match(
    none.out,
    /a new install needs the installation's keys: --backend-key FILE, --vendor-key FILE and --factory-ca/,
  )
  const missing = await install(installScript, join(top, 'missing'), '--vendor-key', join(top, 'no-such.pem'))
  t.equal(missing.code, 2)
  t.match(missing.out, /--vendor-key \S+no-such\.pem: no such file/)
})

t.test('install.sh refuses a build not signed with the vendor key it is given', async (t) => {
  const { keyArgs } = await prepared()
  // This checkout's build is signed with the development vendor key.
  const { code, out } = await install(join(repoRoot, 'deploy', 'install.sh'), join(top, 'unsigned'), ...keyArgs)
  t.equal(code, 1)
  t.match(out, /signed by a key other than the vendor key this device trusts \(sign it: HEMD_VENDOR_KEY=FILE/)
  await t.rejects(access(join(top, 'unsigned', 'opt', 'hemd')), 'nothing is installed')
})

t.test("install.sh installs the operator's keys where hemd.service reads them, and keeps them", async (t) => {
  const { installScript, keys, keyArgs } = await prepared()
  const staging = join(top, 'good')
  const first = await install(installScript, staging, ...keyArgs)
  t.equal(first.code, 0, first.out)
  t.match(first.out, /install: --backend-key sha256 [0-9a-f]{64}/)
  t.match(first.out, /firmware \S+ verifies against its signed manifest and the vendor key/)
  const installed = {
    'backend.pub.pem': keys.backendKey,
    'vendor.pub.pem': keys.vendorKey,
    'factory-ca.crt.pem': keys.factoryCa,
  }
  const unit = await readFile(join(staging, 'etc/systemd/system/hemd.service'), 'utf8')
  for (const [name, from] of Object.entries(installed)) {
    const path = join(staging, 'etc/hemd/keys', name)
    t.equal(await readFile(path, 'utf8'), await readFile(from, 'utf8'), name)
    t.equal((await stat(path)).mode & 0o777, 0o644, `${name}: public, root's`)
    t.match(unit, `/etc/hemd/keys/${name}`, `hemd.service passes ${name}`)
  }
  const again = await install(installScript, staging)
  t.equal(again.code, 0, again.out)
  t.equal(
    await readFile(join(staging, 'etc/hemd/keys/vendor.pub.pem'), 'utf8'),
    await readFile(keys.vendorKey, 'utf8'),
    'a later install without key flags keeps the installed keys',
  )
})

t.test('hemd without keys and without --dev-keys refuses to start', async (t) => {
  const data = join(t.testdir(), 'data')
  const { code, stderr } = await runToEnd(hemdBin, ['--data', data, '--http', '127.0.0.1:0', '--https', '127.0.0.1:0'])
  t.equal(code, 2)
  t.match(stderr, /hemd: no --backend-key, --vendor-key, --factory-ca given: .*--dev-keys for development/)
  await t.rejects(access(data), 'no device is created')
  const dev = await runToEnd(hemdBin, ['--dev-keys', '--data', data, '--backend-key', join(devKeys, 'backend-dev.pem')])
  t.equal(dev.code, 1)
  t.match(dev.stderr, /--backend-key \S+ is a private key/)
})

t.test('development mode says so in the banner', async (t) => {
  const hemd = await runHemd(t, ['--data', join(t.testdir(), 'data')])
  t.match(
    hemd.stdout(),
    /^ {2}keys {3}backend key [0-9a-f]{16} \(development\), vendor key [0-9a-f]{16} \(development\)/m,
  )
  t.match(hemd.stdout(), /WARNING: development keys, published in deploy\/keys\/: .*not for production/)
})

t.test('the banner tags a development key it runs with, whatever file gave it', async (t) => {
  const published = await publishedKeyFiles(join(t.testdir(), 'published'))
  const keys = await operatorKeys(join(t.testdirName, 'own'))
  const args = ['--backend-key', keys.backendKey, '--factory-ca', published.reissuedFactoryCa]
  const hemd = await runHemd(t, ['--data', join(t.testdirName, 'data'), ...args])
  const keysLine = /^ {2}keys {3}(.*)$/m.exec(hemd.stdout())?.[1]
  t.match(
    keysLine,
    /^backend key [0-9a-f]{16}, vendor key [0-9a-f]{16} \(development\), factory CA [0-9a-f]{16} \(development\)$/,
    "the installation's backend key, the development vendor key, the development CA's key re-issued",
  )
  t.match(hemd.stdout(), /WARNING: development keys/)
})
