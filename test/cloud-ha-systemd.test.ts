// Issue 38 item 5: the units of docs/operations.md's "hem-cloud under systemd" (deploy/systemd/hem-cloud*.service)
// are well-formed (systemd-analyze verify, when the host has it), run what the section says, and hem-cloud.service's
// command line, with the section's environment file, passes hem-cloud's own flag parser and option checks.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { SERVE_OPTIONS, serveOptions, type ServeValues } from '../cli/hem-cloud/serve-options.js'
import { parseOptions } from '../cli/index.js'
import { documentedClusterConfig } from './helpers/cloud-cluster.js'
import { distDir, repoRoot } from './helpers/device.js'
import { writeSelfSignedCert } from './helpers/self-signed-cert.js'

const UNITS = ['hem-cloud-nats.service', 'hem-cloud.service'] as const
const unitFile = (name: string) => join(repoRoot, 'deploy/systemd', name)

/** docs/operations.md's section on systemd. */
async function section(): Promise<string> {
  const doc = await readFile(join(repoRoot, 'docs/operations.md'), 'utf8')
  const found = doc.split('## hem-cloud under systemd')[1]?.split('\n## ')[0]
  if (!found) throw new Error('docs/operations.md has no section "hem-cloud under systemd"')
  return found
}

/** The `KEY=value` lines of the section's environment file (the sh block that starts with its path). */
async function documentedEnv(): Promise<Record<string, string>> {
  const block = [...(await section()).matchAll(/```sh\n([^]*?)```/g)].find((m) => m[1]!.startsWith('# /etc/hem-cloud'))
  if (!block) throw new Error('the section has no /etc/hem-cloud/hem-cloud.env block')
  const lines = block[1]!.split('\n').filter((line) => /^[A-Z_]+=/.test(line))
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
}

/** A unit's directive `key`, the last one given. */
function directive(unit: string, key: string): string {
  const values = unit.split('\n').filter((line) => line.startsWith(`${key}=`))
  if (values.length === 0) throw new Error(`no ${key}=`)
  return values.at(-1)!.slice(key.length + 1)
}

/** ExecStart as systemd splits and expands it: `${VAR}` one word, `$VAR` split on white space. */
function commandLine(unit: string, env: Record<string, string>): string[] {
  const defaults = unit
    .split('\n')
    .filter((line) => line.startsWith('Environment='))
    .map((line) => line.slice('Environment='.length).split(/=(.*)/s) as [string, string])
  const all: Record<string, string> = { ...Object.fromEntries(defaults), ...env }
  return directive(unit, 'ExecStart')
    .split(/\s+/)
    .flatMap((word) => {
      const whole = /^\$\{([A-Z_]+)\}$/.exec(word)
      if (whole) return [all[whole[1]!] ?? '']
      const split = /^\$([A-Z_]+)$/.exec(word)
      return split ? (all[split[1]!] ?? '').split(/\s+/).filter(Boolean) : [word]
    })
}

const noAnalyze = spawnSync('systemd-analyze', ['--version']).error
  ? 'systemd-analyze is not installed (Debian: apt-get install systemd)'
  : false

t.test('systemd-analyze verify passes on the units, and fails on a broken one', { skip: noAnalyze }, async (t) => {
  const verify = (...files: string[]) =>
    spawnSync('systemd-analyze', ['verify', '--man=no', ...files], { encoding: 'utf8' })
  const ok = verify(...UNITS.map(unitFile))
  t.equal(ok.status, 0, ok.stderr)
  t.equal(ok.stderr.trim(), '', 'no warning either')
  const broken = join(t.testdir(), 'hem-cloud.service')
  await writeFile(broken, (await readFile(unitFile('hem-cloud.service'), 'utf8')).replace('UMask=', 'UMaks='))
  t.match(verify(broken).stderr, /Unknown key 'UMaks'/, 'a misspelt option is reported')
})

t.test('the section names the units and what they run', async (t) => {
  const text = await section()
  const [nats, cloud] = await Promise.all(UNITS.map(async (name) => readFile(unitFile(name), 'utf8')))
  for (const name of UNITS) t.match(text, `deploy/systemd/${name}`, `the section names ${name}`)
  t.equal(directive(nats!, 'ExecStart'), '/usr/sbin/nats-server -c /etc/nats/hem-cloud.conf')
  t.match(await documentedClusterConfig(), '/etc/nats/hem-cloud.conf', 'the file of the documented configuration')
  const store = `/var/lib/${directive(nats!, 'StateDirectory')}`
  t.match(text, `<STORE_DIR> ${store}`, "the configuration's store is the unit's state directory")
  t.equal(directive(cloud!, 'EnvironmentFile'), '/etc/hem-cloud/hem-cloud.env')
  t.match(directive(cloud!, 'After'), 'hem-cloud-nats.service', 'the instance starts after its node')
  for (const unit of UNITS) t.match(text, `systemctl enable --now ${unit}`, `the commands start ${unit}`)
})

t.test("hem-cloud.service's command line passes hem-cloud's flag parser and option checks", async (t) => {
  const unit = await readFile(unitFile('hem-cloud.service'), 'utf8')
  const words = commandLine(unit, await documentedEnv())
  t.same(words.slice(0, 2), ['/usr/bin/node', '/opt/hemd/dist/bin/hem-cloud.js'], 'the installed build')
  t.ok(existsSync(join(distDir, 'bin/hem-cloud.js')), 'which the build has')
  // The files the unit names, made here: the flags' checks read them.
  const etc = join(t.testdir(), 'etc')
  await mkdir(etc)
  writeSelfSignedCert('api.example', join(etc, 'tls.crt.pem'), join(etc, 'tls.key.pem'))
  const keys = join(repoRoot, 'deploy/keys')
  const files: Record<string, string> = {
    '/etc/hem-cloud/tls.crt.pem': join(etc, 'tls.crt.pem'),
    '/etc/hem-cloud/tls.key.pem': join(etc, 'tls.key.pem'),
    '/etc/hem-cloud/backend.pem': join(keys, 'backend-dev.pem'),
    '/etc/hem-cloud/domain-ca.crt.pem': join(keys, 'domain-ca-dev.crt.pem'),
    '/etc/hem-cloud/domain-ca.key.pem': join(keys, 'domain-ca-dev.key.pem'),
  }
  const args = words.slice(2).map((word) => files[word] ?? word)
  t.notOk(
    args.some((word) => word.startsWith('/etc/')),
    'every file the unit names is one of those',
  )
  const { values, positionals } = parseOptions({ args, options: SERVE_OPTIONS, strict: true, allowPositionals: true })
  t.same(positionals, ['serve'])
  const { options } = await serveOptions(values as ServeValues)
  t.match(
    options,
    {
      host: '0.0.0.0',
      port: 443,
      store: {
        nats: {
          url: 'nats://cloud-1.internal:4222,nats://cloud-2.internal:4222,nats://cloud-3.internal:4222',
          user: 'hem-cloud',
          pass: '<CLOUD_PASSWORD>',
        },
        replicas: 3,
      },
      publicUrl: 'https://api.example',
      testMode: false,
      domain: { zone: 'ence.do' },
    },
    'the cluster of three, R3, HTTPS on 443, the domain service, the public name',
  )
  t.ok(options.tls, 'HTTPS')
})
