// --split as separate Unix users: each service process runs as its own uid and reads only its own
// files; the gateway reads nothing of the enclave, the key repository, the journal or the disks.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { deviceServices } from '../runtime/run-service.js'
import { SETPRIV } from '../runtime/service-accounts.js'
import { verifyDataDir } from './helpers/journal.js'
import { api, b64, createKey } from './helpers/keys.js'
import { login, owned, type Owned } from './helpers/owner.js'
import { call } from './helpers/http.js'
import { serviceProcesses } from './helpers/service-processes.js'
import { imageOf, upload } from './helpers/upload.js'
import { until } from './helpers/until.js'

/** Far from any real user: uid BASE+i is the i-th service of the start order, BASE+8 the core group. */
const BASE = 61_000
const uidOf = (service: (typeof deviceServices)[number]) => BASE + deviceServices.indexOf(service)

const skip =
  process.getuid?.() !== 0
    ? 'changing to other users needs root: run the tests as root to check uid separation'
    : !SETPRIV
      ? "util-linux's setpriv is missing"
      : false

/** `cat FILE` as a service's user (its own group, and the core group for all but the gateway): the error, if any. */
function readAs(service: (typeof deviceServices)[number], file: string): string | undefined {
  const uid = uidOf(service)
  const groups = service === 'gateway' ? ['--clear-groups'] : [`--groups=${BASE + deviceServices.length}`]
  const run = spawnSync(SETPRIV!, [`--reuid=${uid}`, `--regid=${uid}`, ...groups, '--', 'cat', file], {
    encoding: 'buffer',
  })
  return run.status === 0 ? undefined : run.stderr.toString('utf8')
}

t.test('a --split device run as root: every service as its own user', { skip }, async (t) => {
  // The service users must be let through every directory above the data dir.
  const parent = await mkdtemp(join(tmpdir(), 'hemd-privsep-'))
  await chmod(parent, 0o711)
  t.teardown(() => rm(parent, { recursive: true, force: true }))
  const dataDir = join(parent, 'device')
  const o = await owned(t, { variant: 'P', dataDir, boot: { split: true, serviceUids: BASE } })
  t.equal(o.device.uidSeparation, 'on', 'the device says it separates the services')
  const kid = await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'sealed', type: 'AES256' })

  await t.test('each service process runs as its own uid and gid, without root', (t) => ownUids(t))
  await t.test("the gateway's user cannot read the enclave, the keys, the journal or the disks", (t) =>
    gatewayConfined(t, dataDir),
  )
  await t.test('each sealing key is readable by its one service only', (t) => sealingKeysApart(t, dataDir))
  await t.test('the device serves and keeps its keys across a restarted service', (t) => serves(t, o, kid, dataDir))
})

async function ownUids(t: Test): Promise<void> {
  const processes = serviceProcesses()
  t.same([...processes.keys()].sort(), [...deviceServices].sort(), 'one process per service')
  for (const [service, pid] of processes) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const uid = uidOf(service as (typeof deviceServices)[number])
    t.match(status, new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, 'm'), `${service}: uid ${uid}`)
    t.match(status, new RegExp(`^Gid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, 'm'), `${service}: gid ${uid}`)
    t.match(status, /^CapEff:\s+0+$/m, `${service}: no capability`)
    const groups = /^Groups:[ \t]*(.*)$/m.exec(status)![1]!.trim()
    const core = String(BASE + deviceServices.length)
    // Auth formats and erases the disks: it is in the storage's group too.
    const expected = { gateway: '', auth: `${uidOf('storage')} ${core}` }[service as string] ?? core
    t.equal(groups, expected, `${service}: groups ${expected || 'none'}`)
  }
}

async function gatewayConfined(t: Test, dataDir: string): Promise<void> {
  const journal = readdirSync(join(dataDir, 'journal')).find((name) => name.endsWith('.log'))!
  const secrets = [
    'enclave/log-signing.key.pem',
    'enclave/identity.key.pem',
    'enclave/tls.key.pem',
    'enclave/credentials.json',
    'enclave/sealing.key',
    'enclave/disk-sealing.key',
    'keys/slots-4096.bin',
    `journal/${journal}`,
    'disks/disk1.key',
    'disks/disk0.img',
    'boot/slots.json',
  ]
  for (const file of secrets) {
    t.match(readAs('gateway', join(dataDir, file)), /Permission denied/, `the gateway cannot read ${file}`)
  }
  t.equal(readAs('gateway', join(dataDir, 'device.json')), undefined, 'it reads the public identity')
  t.equal(readAs('gateway', join(dataDir, 'run', 'gateway-tls', 'key.pem')), undefined, 'and its own TLS copy')
  t.match(readAs('auth', join(dataDir, 'run', 'gateway-tls', 'key.pem')), /Permission denied/, 'only it')
}

async function sealingKeysApart(t: Test, dataDir: string): Promise<void> {
  const keys = join(dataDir, 'enclave', 'sealing.key')
  const disks = join(dataDir, 'enclave', 'disk-sealing.key')
  t.equal(readAs('keystore', keys), undefined, 'the keystore reads its sealing key')
  t.equal(readAs('storage', disks), undefined, 'storage reads the disk-sealing key')
  for (const service of ['storage', 'auth', 'logger', 'eventstore', 'system', 'upgrade'] as const)
    t.match(readAs(service, keys), /Permission denied/, `${service} cannot read the key repository's sealing key`)
  for (const service of ['keystore', 'auth', 'logger', 'eventstore', 'system', 'upgrade'] as const)
    t.match(readAs(service, disks), /Permission denied/, `${service} cannot read the disk-sealing key`)
  t.match(readAs('storage', join(dataDir, 'keys', 'slots-4096.bin')), /Permission denied/, 'nor storage the keys')
  t.match(readAs('keystore', join(dataDir, 'disks', 'disk1.key')), /Permission denied/, 'nor the keystore a disk')
}

async function serves(t: Test, o: Owned, kid: string, dataDir: string): Promise<void> {
  t.equal((await call(`${o.https}/api/system/status`)).status, 200, 'the gateway serves HTTPS with its copy')
  // The upgrade's user installs the management app; the gateway's serves it at once.
  const app = t.testdir({ 'index.html': '<h1>separate</h1>' })
  const token = await login(o.base, 'system:upgrade')
  t.equal((await upload(o.base, 'ui', await imageOf(app, 'ui', 'ui-sep', ['P']), {}, token)).status, 200)
  t.equal((await api(`${o.base}/api/system/upgrade/check_ui`, token)).status, 201, 'the check starts')
  await until('the check ends', async () => (await api(`${o.base}/api/system/upgrade/check_ui`, token)).status === 200)
  t.equal((await api(`${o.base}/api/system/upgrade/install_ui`, token)).status, 200, 'the app is installed')
  const index = await call(`${o.base}/`)
  t.same([index.status, index.text], [200, '<h1>separate</h1>'], 'and served by the gateway')
  const use = await login(o.base, `keymgmt:use:${kid}`)
  const encrypt = () =>
    api(`${o.https}/api/crypto/cipher/encrypt`, use, { alg: 'AES256-GCM', kid, msg: b64(Buffer.from('sealed')) })
  t.equal((await encrypt()).status, 200, 'the keystore unseals the key')
  // An installed firmware slot as the upgrade's user leaves it (umask 007, the boot dir's group).
  const slot = join(dataDir, 'boot', 'slots', 'B')
  await mkdir(join(slot, 'bin'), { recursive: true, mode: 0o750 })
  await writeFile(join(slot, 'bin', 'hemd.js'), '// code\n', { mode: 0o640 })
  for (const path of [slot, join(slot, 'bin'), join(slot, 'bin', 'hemd.js')]) await chown(path, uidOf('upgrade'), BASE)
  const before = serviceProcesses().get('keystore')!
  process.kill(before, 'SIGKILL')
  await until('the keystore restarted', () => ![undefined, before].includes(serviceProcesses().get('keystore')), 30_000)
  await until('encrypt again', async () => (await encrypt()).status === 200, 30_000)
  t.pass('a restarted keystore, as its own user again, reads the key repository')
  t.equal(readAs('gateway', join(slot, 'bin', 'hemd.js')), undefined, "the gateway reads an installed slot's code")
  const credentials = join(dataDir, 'enclave', 'credentials.json')
  t.equal(readAs('logger', credentials), undefined, 'what auth wrote, the other core services read after a start')
  t.match(readAs('gateway', credentials), /Permission denied/, 'the gateway never')
  t.equal((await verifyDataDir(o.device.dataDir, o.device.logPublicKey, true)).ok, true, 'the journal verifies')
}
