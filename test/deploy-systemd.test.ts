// deploy/: the systemd units, install.sh into a staging root, and a device on a nats-server
// started on its own with the users `hemd bus-config` wrote (what systemd does on a board).
import t from 'tap'
import { connect } from '@nats-io/transport-node'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { access, appendFile, chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { configureBus, parseBusConfigArgs } from '../cli/hemd/bus-config-cli.js'
import {
  BusConfigError,
  existingBusAccess,
  newBusCredentials,
  readBusAccess,
  writeBusAccess,
  writeBusConfig,
} from '../bus/bus-config.js'
import { parseHemdArgs } from '../cli/hemd/hemd-cli.js'
import { HEMD_NODE_FLAGS } from '../runtime/node-flags.js'
import { inboxPrefix, services } from '../bus/services.js'
import { Subjects } from '../protocol/subjects.js'
import { openHal } from '../hal/index.js'
import { builtFirmware, freePort, repoRoot } from './helpers/device.js'
import { hemdBin, runHemd, runToEnd } from './helpers/hemd-process.js'
import { call } from './helpers/http.js'
import { until } from './helpers/until.js'
import { operatorCheckout, type OperatorCheckout } from './helpers/operator-checkout.js'

const installScript = join(repoRoot, 'deploy', 'install.sh')
const unitNames = ['hemd-bus.service', 'hemd.service'] as const
const top = t.testdir()
const staging = join(top, 'root')
let installing: Promise<{ code: number | null; out: string }> | undefined
// install.sh wants the operator's own keys, and a build signed with their vendor key.
let checkout: Promise<OperatorCheckout> | undefined

async function install(...extra: string[]): Promise<{ code: number | null; out: string }> {
  const { installScript, keyArgs } = await (checkout ??= operatorCheckout(join(top, 'checkout')))
  return new Promise((resolve) => {
    // Never without --root: the script would install onto this host.
    const child = spawn(
      'bash',
      [installScript, '--root', staging, '--no-apt', '--no-user', '--no-systemctl', ...keyArgs, ...extra],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c))
    child.once('exit', (code) => resolve({ code, out }))
  })
}

/** The staging install every test below shares, made once. */
function installed(): Promise<{ code: number | null; out: string }> {
  return (installing ??= install())
}

/** `Key=value` lines of a unit, in order (comments and sections left out). */
function directives(text: string): [string, string][] {
  return text
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)])
}

function values(text: string, key: string): string[] {
  return directives(text)
    .filter(([k]) => k === key)
    .map(([, v]) => v)
}

function mode(path: string): Promise<string> {
  return stat(path).then((s) => (s.mode & 0o7777).toString(8).padStart(4, '0'))
}

t.test('the units carry the hardening and run what the layout says', async (t) => {
  const units = Object.fromEntries(
    await Promise.all(
      unitNames.map(async (n) => [n, await readFile(join(repoRoot, 'deploy', 'systemd', n), 'utf8')] as const),
    ),
  )
  for (const [name, text] of Object.entries(units)) {
    const one = (key: string) => values(text, key).join('\n')
    t.equal(one('User'), 'hemd', `${name}: the dedicated user`)
    t.equal(one('Group'), 'hemd', `${name}: and group`)
    t.equal(one('Restart'), 'on-failure', `${name}: restarted on failure`)
    t.equal(one('NoNewPrivileges'), 'yes', name)
    t.equal(one('ProtectSystem'), 'strict', name)
    t.equal(one('ReadWritePaths'), '/var/lib/hemd', `${name}: writes the data dir only`)
    t.equal(one('StateDirectory'), 'hemd', name)
    t.equal(one('ProtectHome'), 'yes', name)
    t.equal(one('PrivateTmp'), 'yes', name)
    t.equal(one('PrivateDevices'), 'yes', name)
    t.equal(one('CapabilityBoundingSet'), '', `${name}: no capability at all`)
    t.equal(one('AmbientCapabilities'), '', name)
    t.equal(one('RestrictAddressFamilies'), 'AF_UNIX AF_INET AF_INET6', name)
    t.equal(one('SystemCallFilter'), '@system-service', name)
    t.equal(one('UMask'), '0077', name)
    for (const key of [
      'LockPersonality',
      'RestrictRealtime',
      'ProtectKernelTunables',
      'ProtectKernelModules',
      'ProtectKernelLogs',
      'ProtectControlGroups',
      'RestrictSUIDSGID',
      'RestrictNamespaces',
    ]) {
      t.equal(one(key), 'yes', `${name}: ${key}`)
    }
    t.same(values(text, 'MemoryDenyWriteExecute'), [], `${name}: no MemoryDenyWriteExecute (V8 JIT)`)
    t.match(text, /MemoryDenyWriteExecute.*must NOT be set|MemoryDenyWriteExecute is not set/, `${name}: and says why`)
  }
  const bus = units['hemd-bus.service']!
  t.match(
    values(bus, 'ExecStartPre')[0],
    new RegExp(
      /^\/usr\/bin\/node \/opt\/hemd\/dist\/bin\/hemd\.js bus-config /.source +
        /--keep --data \/var\/lib\/hemd .*--out \/run\/hemd-bus/.source,
    ),
  )
  t.equal(values(bus, 'ExecStart')[0], '/usr/sbin/nats-server -c /run/hemd-bus/nats-server.conf')
  t.equal(values(bus, 'RuntimeDirectory')[0], 'hemd-bus')
  t.equal(values(bus, 'RuntimeDirectoryPreserve')[0], 'yes', 'the passwords live as long as the boot')
  const hemd = units['hemd.service']!
  t.equal(values(hemd, 'Requires')[0], 'hemd-bus.service')
  t.match(values(hemd, 'After')[0], /\bhemd-bus\.service\b/)
  t.equal(
    values(hemd, 'ExecStart')[0],
    `/usr/bin/node ${HEMD_NODE_FLAGS.join(' ')} /opt/hemd/dist/bin/hemd.js ` +
      `--data /var/lib/hemd --variant \${HEMD_VARIANT} --bus /run/hemd-bus ` +
      '--backend-key /etc/hemd/keys/backend.pub.pem --vendor-key /etc/hemd/keys/vendor.pub.pem ' +
      '--factory-ca /etc/hemd/keys/factory-ca.crt.pem $HEMD_SPLIT $HEMD_OPTS',
    "the launcher with the Node flags of its shebang, on the bus of hemd-bus.service, with the installation's keys",
  )
  t.equal(values(hemd, 'KillMode')[0], 'mixed', 'only the launcher gets SIGTERM: it stops the services in order')
})

/** What the supervisor of a --split board needs as root (docs/operations.md says what each is for). */
const SPLIT_CAPABILITIES = [
  'CAP_SETUID',
  'CAP_SETGID',
  'CAP_CHOWN',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_DAC_OVERRIDE',
  'CAP_KILL',
] as const
const splitDropIns = [
  ['hemd.service', 'hemd-split.conf'],
  ['hemd-bus.service', 'hemd-bus-split.conf'],
] as const

t.test('the --split drop-ins: root with exactly the documented capabilities, nothing else loosened', async (t) => {
  const source = (name: string) => readFile(join(repoRoot, 'deploy', 'systemd', name), 'utf8')
  const hemd = await source('hemd-split.conf')
  t.same(
    directives(hemd).map(([k]) => k),
    [
      'User',
      'Group',
      'Environment',
      'CapabilityBoundingSet',
      'AmbientCapabilities',
      'RestrictSUIDSGID',
      'StateDirectoryMode',
      'RuntimeDirectoryMode',
      'ExecStartPre',
    ],
    'it sets these and leaves every other line of hemd.service (NoNewPrivileges, the filters...) as it is',
  )
  const one = (key: string) => values(hemd, key).join('\n')
  t.equal(one('User'), 'root')
  t.equal(one('Group'), 'root')
  t.equal(one('Environment'), 'HEMD_SPLIT=--split', 'the flag comes with the privileges')
  t.match(values(await source('hemd.service'), 'ExecStart')[0], / \$HEMD_SPLIT \$HEMD_OPTS$/)
  t.same(one('CapabilityBoundingSet').split(' ').sort(), [...SPLIT_CAPABILITIES].sort(), 'the bounding set')
  t.equal(one('AmbientCapabilities'), '', 'no ambient capability')
  t.equal(one('RestrictSUIDSGID'), 'no', 'the shared directories are setgid')
  t.equal(one('StateDirectoryMode'), '0711', 'the mode data-dir-access.ts gives the data dir')
  t.match(one('ExecStartPre'), /^-\/usr\/bin\/install -d -o hemd-storage -g hemd-storage -m 0700 \/run\/hemd\/nbd$/)
  const documented = (text: string) => [...text.matchAll(/`(CAP_[A-Z_]+)`/g)].map((m) => m[1]!).sort()
  const layout = await readFile(join(repoRoot, 'deploy', 'LAYOUT.md'), 'utf8')
  t.same(
    /`CapabilityBoundingSet=([A-Z_ ]+)`/.exec(layout)?.[1]?.split(' ').sort(),
    [...SPLIT_CAPABILITIES].sort(),
    'LAYOUT.md names the same set',
  )
  const operations = await readFile(join(repoRoot, 'docs', 'operations.md'), 'utf8')
  const table = /\| capability \| what the supervisor does with it \|\n((?:\|.*\n)+)/.exec(operations)?.[1] ?? ''
  t.same(documented(table), [...SPLIT_CAPABILITIES].sort(), 'operations.md says what each one is for')
  t.same(
    directives(await source('hemd-bus-split.conf')),
    [['StateDirectory', '']],
    'the bus only stops claiming the data dir (systemd would chown it back to hemd at each start)',
  )
})

const noAnalyze = spawnSync('systemd-analyze', ['--version']).error
  ? 'systemd-analyze is not installed (Debian: apt-get install systemd)'
  : false

t.test(
  'systemd-analyze verify passes on the installed units, and fails on broken ones',
  { skip: noAnalyze },
  async (t) => {
    const { code, out } = await installed()
    t.equal(code, 0, out)
    const dir = join(staging, 'etc', 'systemd', 'system')
    // Without --root: it checks that the binaries the units run exist on this host (node, nats-server).
    const verify = (...files: string[]) =>
      spawnSync('systemd-analyze', ['verify', '--man=no', ...files], { encoding: 'utf8' })
    const ok = verify(...unitNames.map((n) => join(dir, n)))
    t.equal(ok.status, 0, ok.stderr)
    t.equal(ok.stderr.trim(), '', 'no warning either')

    const broken = join(top, 'broken')
    await rm(broken, { recursive: true, force: true })
    await mkdir(broken)
    const bus = await readFile(join(dir, 'hemd-bus.service'), 'utf8')
    await writeFile(join(broken, 'hemd-bus.service'), bus.replace('/usr/sbin/nats-server', '/usr/sbin/no-such-server'))
    const missing = verify(join(broken, 'hemd-bus.service'))
    t.not(missing.status, 0, 'a binary that is not there fails')
    t.match(missing.stderr, /no-such-server/)
    await writeFile(
      join(broken, 'hemd-bus.service'),
      bus.replace('ProtectHome=yes', 'ProtectHome=yes\nProtectHomme=yes'),
    )
    t.match(
      verify(join(broken, 'hemd-bus.service')).stderr,
      /Unknown key 'ProtectHomme'/,
      'a misspelt option is reported',
    )
  },
)

t.test('install.sh into a staging root: the layout of LAYOUT.md, and a second run keeps the device', async (t) => {
  const { code, out } = await installed()
  t.equal(code, 0, out)
  t.match(out, /firmware \S+ verifies against its signed manifest/)
  const layout = await readFile(join(repoRoot, 'deploy', 'LAYOUT.md'), 'utf8')
  const rows = [...layout.matchAll(/^\| `([^`]+)` \| [^|]+ \| (0\d{3}) \| install\.sh \|/gm)].map((m) => ({
    path: m[1]!,
    mode: m[2]!,
  }))
  t.ok(rows.length >= 10, `LAYOUT.md lists what install.sh installs (${rows.length} paths)`)
  for (const row of rows) t.equal(await mode(join(staging, row.path)).catch(() => 'missing'), row.mode, row.path)
  for (const unit of unitNames) {
    t.equal(
      await readFile(join(staging, 'etc/systemd/system', unit), 'utf8'),
      await readFile(join(repoRoot, 'deploy/systemd', unit), 'utf8'),
      `${unit} as in deploy/systemd`,
    )
  }
  const env = await readFile(join(staging, 'etc/hemd/hemd.env'), 'utf8')
  t.match(env, /^HEMD_VARIANT=P$/m)
  t.match(env, /^HEMD_OPTS="--http 127\.0\.0\.1:8080 --https 0\.0\.0\.0:8443"$/m)
  const modules = join(staging, 'opt/hemd/node_modules')
  for (const dep of ['pino', 'xstate', '@nats-io/transport-node', 'uWebSockets.js'])
    await t.resolves(access(join(modules, dep)), `${dep} is there`)
  for (const dev of ['tap', 'typescript', 'esbuild', 'autocannon'])
    await t.rejects(access(join(modules, dev)), `${dev} (a dev dependency) is not`)

  // The device and the operator's flags stay; the runtime is replaced whole.
  await writeFile(join(staging, 'var/lib/hemd/device.json'), '{"marker":true}\n', { mode: 0o600 })
  await appendFile(join(staging, 'etc/hemd/hemd.env'), '# edited by the operator\n')
  await writeFile(join(staging, 'opt/hemd/dist/stray.js'), '')
  const again = await install('--variant', 'E')
  t.equal(again.code, 0, again.out)
  t.match(again.out, /keeping .*hemd\.env/)
  t.match(again.out, /keeping the data dir/)
  t.equal(
    await readFile(join(staging, 'var/lib/hemd/device.json'), 'utf8'),
    '{"marker":true}\n',
    'the data dir is kept',
  )
  t.match(
    await readFile(join(staging, 'etc/hemd/hemd.env'), 'utf8'),
    /HEMD_VARIANT=P\n[^]*# edited by the operator\n$/,
    'the env file is kept',
  )
  await t.rejects(access(join(staging, 'opt/hemd/dist/stray.js')), 'nothing of the old runtime stays')
  for (const row of rows)
    t.equal(await mode(join(staging, row.path)).catch(() => 'missing'), row.mode, `${row.path} after the second run`)
  await rm(join(staging, 'var/lib/hemd/device.json'))

  const bad = spawnSync('bash', [installScript, '--root', staging, '--bogus'], { encoding: 'utf8' })
  t.equal(bad.status, 2, 'an unknown option is a usage error')
  t.equal(spawnSync('bash', [installScript, '--root', staging, '--variant', 'X'], { encoding: 'utf8' }).status, 2)
})

t.test(
  'install.sh --split adds the drop-ins and leaves the data dir to the supervisor; without, removes them',
  async (t) => {
    t.equal((await installed()).code, 0)
    const units = join(staging, 'etc/systemd/system')
    const data = join(staging, 'var/lib/hemd')
    const dropIn = (unit: string) => join(units, `${unit}.d`, 'split.conf')
    // A device the supervisor has prepared: the data dir's top is root's, mode 0711.
    await writeFile(join(data, 'device.json'), '{}\n', { mode: 0o644 })
    await chmod(data, 0o711)
    const split = await install('--split')
    t.equal(split.code, 0, split.out)
    for (const [unit, source] of splitDropIns) {
      t.equal(
        await readFile(dropIn(unit), 'utf8'),
        await readFile(join(repoRoot, 'deploy/systemd', source), 'utf8'),
        `${unit}.d/split.conf is deploy/systemd/${source}`,
      )
      t.equal(await mode(dropIn(unit)), '0644')
    }
    t.equal(await mode(data), '0711', "a device's data dir is left as the supervisor set it")
    if (!noAnalyze) {
      // A unit given by path is loaded with the drop-ins of its directory.
      const verify = () =>
        spawnSync('systemd-analyze', ['verify', '--man=no', ...unitNames.map((n) => join(units, n))], {
          encoding: 'utf8',
        })
      const ok = verify()
      t.equal(ok.status, 0, ok.stderr)
      t.equal(ok.stderr.trim(), '', 'systemd-analyze verify: no warning with the drop-ins')
      await appendFile(dropIn('hemd.service'), 'CapabilityBoundingSett=CAP_KILL\n')
      t.match(verify().stderr, /Unknown key 'CapabilityBoundingSett'/, 'and it did read them')
    }

    const plain = await install()
    t.equal(plain.code, 0, plain.out)
    t.match(plain.out, /removed .*hemd\.service\.d\/split\.conf/)
    for (const [unit] of splitDropIns) await t.rejects(access(join(units, `${unit}.d`)), `no ${unit}.d any more`)
    t.equal(await mode(data), '0700', 'the data dir is hemd-only again')
    await rm(join(data, 'device.json'))
  },
)

t.test('bus-config arguments', async (t) => {
  t.match(parseBusConfigArgs(['--out', 'o']), {
    dataDir: join(process.cwd(), 'var/hemd'),
    variant: 'P',
    listen: { host: '127.0.0.1', port: 4222 },
    keep: false,
  })
  t.match(
    parseBusConfigArgs([
      '--out',
      '/o',
      '--data',
      '/d',
      '--variant',
      'e',
      '--listen',
      '127.0.0.2:5000',
      '--backend',
      'tls://fleet.example:7422',
      '--keep',
    ]),
    {
      out: '/o',
      dataDir: '/d',
      variant: 'E',
      listen: { host: '127.0.0.2', port: 5000 },
      backend: { url: 'tls://fleet.example:7422', domain: 'hem' },
      keep: true,
    },
  )
  t.equal(parseBusConfigArgs(['-h']), 'help')
  const cases: [string[], RegExp][] = [
    [[], /--out DIR is required/],
    [['--out', 'o', '--listen', '0.0.0.0:4222'], /loopback only/],
    [['--out', 'o', '--listen', '127.0.0.1:0'], /fixed port/],
    [['--out', 'o', '--listen', '4222'], /HOST:PORT/],
    [['--out', 'o', '--variant', 'X'], /--variant/],
    [['--out', 'o', '--backend', 'http://x'], /--backend/],
    [['--out', 'o', '--backend', 'nats://x"\\'], /--backend/],
    [['--out', 'o', '--stream-generation', '2'], /go with --backend/],
    [['--out', 'o', '--backend', 'nats://x', '--stream-generation', '0'], /--stream-generation/],
    [['--out', 'o', 'extra'], /unexpected argument/],
  ]
  for (const [argv, message] of cases)
    t.throws(() => parseBusConfigArgs(argv), { name: 'UsageError', message }, argv.join(' ') || '(nothing)')
  t.throws(() => parseHemdArgs(['--nats', 'nats://127.0.0.1:4222', '--bus', '/run/hemd-bus']), /exclude each other/)
})

t.test('the bus files: private, complete, and for one device only', async (t) => {
  const dir = join(top, 'files', 'bus')
  const credentials = newBusCredentials()
  t.same(
    [...credentials.keys()],
    services.map((s) => s.name),
    'a user for every service',
  )
  t.equal(new Set([...credentials.values()].map((c) => c.pass)).size, services.length, 'each with its own password')
  const config = await writeBusConfig({ dir, devid: '00112233aabbccdd', host: '127.0.0.1', port: 4999, credentials })
  await writeBusAccess(dir, { devid: '00112233aabbccdd', url: 'nats://127.0.0.1:4999', credentials })
  t.equal(await mode(dir), '0700')
  t.equal(await mode(config), '0600')
  t.equal(await mode(join(dir, 'bus-credentials.json')), '0600')
  t.match(await readFile(config, 'utf8'), /^listen: "127\.0\.0\.1:4999"$/m)
  const access = await readBusAccess(dir, '00112233aabbccdd')
  t.same([...access.credentials], [...credentials])
  await t.rejects(readBusAccess(dir, 'ffffffffffffffff'), {
    name: 'BusConfigError',
    message: /is the bus of device 00112233aabbccdd/,
  })
  await t.rejects(readBusAccess(join(top, 'files', 'none')), BusConfigError)
  t.equal((await existingBusAccess(dir))?.url, 'nats://127.0.0.1:4999', 'a complete pair is found')
  await rm(config)
  t.equal(await existingBusAccess(dir), undefined, 'credentials without the configuration are no pair')
  const text = JSON.parse(await readFile(join(dir, 'bus-credentials.json'), 'utf8')) as {
    users: Record<string, unknown>
  }
  delete text.users.gateway
  await writeFile(join(dir, 'bus-credentials.json'), JSON.stringify(text))
  await t.rejects(
    readBusAccess(dir),
    { message: /not a complete bus credentials file/ },
    'a service without its user is refused',
  )
})

t.test('bus-config on a device that exists: reads its devid, keeps a pair for the same listener only', async (t) => {
  const dataDir = join(top, 'existing', 'data')
  const out = join(top, 'existing', 'bus')
  const hal = await openHal({ variant: 'E', dataDir, firmware: await builtFirmware() })
  const devid = hal.devid
  await hal.close()
  const args = { out, dataDir, variant: 'E' as const, listen: { host: '127.0.0.1', port: 4222 }, keep: true }
  t.match(await configureBus(args), new RegExp(`wrote .* for devid ${devid} \\(nats://127\\.0\\.0\\.1:4222\\)`))
  const first = await readBusAccess(out, devid)
  t.match(await configureBus(args), /kept/)
  t.same([...(await readBusAccess(out, devid)).credentials], [...first.credentials], '--keep: the same passwords')
  t.match(
    await configureBus({ ...args, listen: { host: '127.0.0.1', port: 4223 } }),
    /wrote/,
    'another listener is written anew',
  )
  t.equal((await readBusAccess(out, devid)).url, 'nats://127.0.0.1:4223')
  t.not((await readBusAccess(out, devid)).credentials.get('gateway')!.pass, first.credentials.get('gateway')!.pass)
  await t.rejects(
    configureBus({ ...args, variant: 'P' }),
    { name: 'HalVariantMismatchError' },
    "the device's variant only",
  )
  await configureBus({ ...args, keep: false, backend: { url: 'nats://127.0.0.1:7422', domain: 'hem' } })
  t.match(
    await readFile(join(out, 'nats-server.conf'), 'utf8'),
    /"nats:\/\/127\.0\.0\.1:7422"/,
    '--backend reaches the configuration',
  )
  t.same(
    (await readBusAccess(out, devid)).backend,
    { url: 'nats://127.0.0.1:7422', domain: 'hem' },
    'and the credentials file, where hemd --bus finds where to mirror the journal',
  )
})

t.test(
  'end to end: hemd bus-config, nats-server on its own, hemd --bus; least privilege, --keep and a bus restart',
  async (t) => {
    t.equal((await installed()).code, 0)
    const dir = join(top, 'e2e')
    const data = join(dir, 'data')
    const busDir = join(dir, 'bus')
    const port = await freePort()
    // bus-config from the staged install: its production dependencies are enough to run it.
    const stagedHemd = join(staging, 'opt/hemd/dist/bin/hemd.js')
    const busConfig = (...args: string[]) =>
      runToEnd(stagedHemd, ['bus-config', '--data', data, '--out', busDir, '--listen', `127.0.0.1:${port}`, ...args])
    const readCredentials = () => readFile(join(busDir, 'bus-credentials.json'), 'utf8')

    const first = await busConfig()
    t.equal(first.code, 0, first.stderr)
    t.match(first.stdout, /wrote .*nats-server\.conf and bus-credentials\.json for devid [0-9a-f]{16}/)
    await t.resolves(access(join(data, 'device.json')), 'a new data dir got its device, as at a first boot')
    t.equal(await mode(busDir), '0700')
    t.equal(await mode(join(busDir, 'nats-server.conf')), '0600')
    t.equal(await mode(join(busDir, 'bus-credentials.json')), '0600')
    const written = JSON.parse(await readCredentials()) as {
      devid: string
      url: string
      users: Record<string, { user: string; pass: string }>
    }
    t.equal(written.url, `nats://127.0.0.1:${port}`)
    t.same(Object.keys(written.users).sort(), services.map((s) => s.name).sort())
    for (const { pass } of Object.values(written.users))
      t.notMatch(first.stdout + first.stderr, pass, 'no password is printed')

    const fresh = await busConfig()
    t.not(
      (JSON.parse(await readCredentials()) as typeof written).users.gateway!.pass,
      written.users.gateway!.pass,
      'without --keep: new passwords',
    )
    const before = await readCredentials()
    const configBefore = await readFile(join(busDir, 'nats-server.conf'), 'utf8')
    const kept = await busConfig('--keep')
    t.equal(kept.code, 0, kept.stderr)
    t.match(kept.stdout, /kept the bus configuration/)
    t.equal(await readCredentials(), before, '--keep leaves the credentials as they were')
    t.equal(await readFile(join(busDir, 'nats-server.conf'), 'utf8'), configBefore, 'and the configuration')
    t.equal(fresh.code, 0)
    const usage = await runToEnd(hemdBin, ['bus-config', '--out', busDir, '--listen', '10.0.0.1:4222'])
    t.equal(usage.code, 2, 'a listener beyond loopback is a usage error')
    t.match(usage.stderr, /Usage: hemd bus-config/)
    const help = await runToEnd(hemdBin, ['bus-config', '--help'])
    t.equal(help.code, 0)
    t.match(help.stdout, /--keep/)
    const mismatch = await busConfig('--variant', 'E')
    t.equal(mismatch.code, 1, "a variant other than the device's is refused")
    t.match(mismatch.stderr, /holds a P device; cannot open it as E/)
    t.equal(await readCredentials(), before, 'and the pair is left as it was')
    const noBus = await runToEnd(hemdBin, [
      '--dev-keys',
      '--data',
      join(dir, 'other'),
      '--bus',
      join(dir, 'no-bus'),
      '--http',
      '127.0.0.1:0',
      '--https',
      '127.0.0.1:0',
    ])
    t.equal(noBus.code, 1, 'hemd --bus without a bus-config refuses to start')
    t.match(
      noBus.stderr,
      /cannot read the bus credentials .*no-bus\/bus-credentials\.json \(write them with: hemd bus-config/,
    )

    const access1 = JSON.parse(before) as typeof written
    let nats = await startNatsServer(t, busDir)
    const hemd = await runHemd(t, ['--data', data, '--bus', busDir])
    t.match(hemd.stdout(), new RegExp(`bus +nats://127\\.0\\.0\\.1:${port} \\(external\\)`))
    t.match(hemd.stdout(), new RegExp(`devid ${access1.devid}`))
    const status = await call(`${hemd.httpUrl}/api/system/status`)
    t.equal(status.status, 200)
    t.equal(status.json.fls_state, 0)
    const sim = await runToEnd(hemdBin, ['sim', '--data', data, 'status'])
    t.equal(sim.code, 0, `hemd sim reaches the system service as simctl: ${sim.stderr}`)

    // The gateway's own user may not write the journal: the server refuses it by name.
    const gateway = await connect({
      servers: access1.url,
      user: access1.users.gateway!.user,
      pass: access1.users.gateway!.pass,
      inboxPrefix: inboxPrefix('gateway'),
      maxReconnectAttempts: 0,
    })
    t.teardown(() => gateway.close())
    const errors: string[] = []
    void (async () => {
      for await (const s of gateway.status()) if (s.type === 'error') errors.push(s.error.message)
    })()
    const journalSubject = new Subjects(access1.devid).command('eventstore', 'append')
    gateway.publish(journalSubject, new Uint8Array([1]))
    await gateway.flush()
    await until('the permission error', () => errors.length > 0)
    t.match(errors[0], new RegExp(`Permissions Violation for Publish to "${journalSubject.replaceAll('.', '\\.')}"`))
    await t.rejects(gateway.request(journalSubject, new Uint8Array([1]), { timeout: 2_000 }), /Permissions Violation/)
    await gateway.close()

    // systemd restarting the bus: ExecStartPre keeps the passwords, nats-server comes back, hemd's services reconnect.
    await nats.stop()
    const again = await busConfig('--keep')
    t.match(again.stdout, /kept/)
    nats = await startNatsServer(t, busDir)
    await until(
      'the device answers after the bus restart',
      async () => (await call(`${hemd.httpUrl}/api/system/status`)).status === 200,
      30_000,
    )
    await until(
      'the system service is back on the bus',
      async () => (await runToEnd(hemdBin, ['sim', '--data', data, 'status'])).code === 0,
      30_000,
    )
    t.equal(
      (await call(`${hemd.httpUrl}/api/system/status`)).status,
      200,
      'the device answers again on the restarted bus',
    )
    t.equal(await hemd.interrupt(), 0, 'hemd stops cleanly')
    t.match(hemd.stdout(), /journal sealed/)

    // --split: each service in its own process, each still as its own user of that bus.
    const split = await runHemd(t, ['--data', data, '--bus', busDir, '--split'])
    t.match(split.stdout(), /split into processes/)
    t.equal((await call(`${split.httpUrl}/api/system/status`)).status, 200, 'the split device answers')
    const splitSim = await runToEnd(hemdBin, ['sim', '--data', data, 'status'])
    t.equal(splitSim.code, 0, splitSim.stderr)
    t.equal(await split.interrupt(), 0, 'and stops cleanly')
  },
)

interface StartedNats {
  child: ChildProcess
  stop(): Promise<void>
}

/** nats-server on the configuration bus-config wrote, as hemd-bus.service's ExecStart runs it. */
async function startNatsServer(t: { teardown(fn: () => unknown): void }, busDir: string): Promise<StartedNats> {
  const child = spawn('nats-server', ['-c', join(busDir, 'nats-server.conf')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (log = (log + c).slice(-4096)))
  const exited = once(child, 'exit')
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await exited
  }
  t.teardown(stop)
  await until(
    'nats-server listening',
    () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited: ${log}`)
      return /Server is ready/.test(log)
    },
    { ms: 15_000, rethrow: true },
  )
  return { child, stop }
}
