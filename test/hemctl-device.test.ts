// hemctl disk, logs and upgrade against real devices, in-process with captured io.
import { createHash, generateKeyPairSync } from 'node:crypto'
import { cp, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hemctl/cli.js'
import { buildImage, packDirectory } from '../image/index.js'
import { LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { owned, USER_PASS, type Owned } from './helpers/owner.js'
import { firmwareImage, imageOf } from './helpers/upload.js'
import { until } from './helpers/until.js'

function hemctlOf(o: Owned, root: string) {
  return async (argv: string[], { tty = false } = {}) => {
    let stdout = ''
    let stderr = ''
    const io = {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { HEM_PASSPHRASE: USER_PASS, XDG_CONFIG_HOME: root },
      askSecret: async () => undefined,
      stdin: (async function* () {})(),
      stderrIsTTY: tty,
    }
    const code = await main([...argv, '--url', o.https, '--insecure'], io)
    return { code, stdout, stderr }
  }
}

t.test('P: disks, the audit log, an app upgrade', async (t) => {
  const root = t.testdir({ app: { 'index.html': '<h1>hemctl</h1>' } })
  const o = await owned(t, { variant: 'P', dataDir: join(root, 'device') })
  const hemctl = hemctlOf(o, root)
  // Disk 1's mode in status: Disk 0's may still be settling into its power-up mode after the format (a CI flake).
  const disk1 = async () => ((await call(`${o.base}/api/system/status`)).json.storage as string[])[1]!.split(':')[1]

  await t.test('disk unlock and lock', async (t) => {
    t.match((await hemctl(['disk', '--help'])).stdout, /^Usage: hemctl disk SUBCOMMAND/)
    const bad = await hemctl(['disk', 'unlock', '2'])
    t.equal(bad.code, 2)
    t.match(bad.stderr, /^hemctl disk unlock: '2' is no disk: 0 or 1\n\nUsage: hemctl disk unlock N \[--rw\]/)
    t.equal(await disk1(), '-', 'Disk 1 starts locked')
    const ro = await hemctl(['disk', 'unlock', '1'])
    t.equal(ro.code, 0, ro.stderr)
    t.equal(ro.stdout, 'disk 1 unlocked ro\n')
    t.equal(await disk1(), 'ro')
    const rw = await hemctl(['disk', 'unlock', '1', '--rw', '--json'])
    t.equal(rw.code, 0, rw.stderr)
    t.same(JSON.parse(rw.stdout), { disk: 1, mode: 'rw' })
    t.equal(await disk1(), 'rw')
    const locked = await hemctl(['disk', 'lock', '1'])
    t.equal(locked.code, 0, locked.stderr)
    t.equal(locked.stdout, 'disk 1 locked\n')
    t.equal(await disk1(), '-')
  })

  await t.test('logs list, pull, verify and timeline', async (t) => {
    const listed = await hemctl(['logs', 'list', '--json'])
    t.equal(listed.code, 0, listed.stderr)
    const ids = JSON.parse(listed.stdout) as string[]
    t.ok(ids.length >= 1 && ids.every((id) => /^[0-9a-f]{8}$/.test(id)), 'file ids')

    const out = join(root, 'logs')
    const pulled = await hemctl(['logs', 'pull', '--out', out])
    t.equal(pulled.code, 0, pulled.stderr)
    const names = (await readdir(out)).sort()
    t.same(names, [...ids.map((id) => `${id}.log`), 'head.json', 'log-key.b64'])
    t.equal(
      await readFile(join(out, 'log-key.b64'), 'utf8'),
      `${Buffer.from(o.device.logPublicKey).toString('base64')}\n`,
    )
    t.match(pulled.stdout, `\nverify with: hemctl logs verify --allow-open ${out}\n`)

    const verified = await hemctl(['logs', 'verify', '--allow-open', out])
    t.equal(verified.code, 0, verified.stdout)
    t.match(verified.stdout, /^files: \d+, records: \d+, seals: \d+\n/)
    t.match(verified.stdout, /\nOK\n$/)
    const closedOnly = await hemctl(['logs', 'verify', out])
    t.equal(closedOnly.code, 1, 'without --allow-open, the open file is a problem')
    t.match(closedOnly.stdout, /\nFAILED: \d+ problem\(s\)\n$/)

    const told = await hemctl(['logs', 'timeline', out, '--allow-open', '--type', 'TRANSITION', '--subject', 'U'])
    t.equal(told.code, 0, told.stderr)
    t.match(told.stdout.replace(/ +/g, ' '), ' user transition disk 1 locked → ro by UNLOCK_RO OK\n')
    t.match(told.stdout.replace(/ +/g, ' '), ' user transition disk 1 rw → locked by LOCK OK\n')
    t.notMatch(told.stdout, / login /, 'only the type asked for')
    const timeline = async (...flags: string[]) => {
      const answer = await hemctl(['logs', 'timeline', out, '--allow-open', ...flags])
      t.equal(answer.code, 0, answer.stderr)
      return answer.stdout.trimEnd().split('\n')
    }
    const everything = await timeline()
    t.ok(
      (await timeline('--since', '0', '--until', '4102444800', '--all')).length > everything.length,
      '--all: seals too',
    )
    t.notOk(
      (await timeline('--until', '1')).some((line) => / transition /.test(line)),
      'nothing happened before 1970-01-01T00:00:01Z',
    )

    const tampered = join(root, 'tampered')
    await cp(out, tampered, { recursive: true })
    const first = join(tampered, `${ids[0]}.log`)
    const bytes = await readFile(first)
    bytes[200] = bytes[200] === 0x41 ? 0x42 : 0x41
    await writeFile(first, bytes)
    const broken = await hemctl(['logs', 'verify', '--allow-open', tampered])
    t.equal(broken.code, 1)
    t.match(broken.stdout, new RegExp(`${first}:seq [0-9a-f]+: `))
    const untold = await hemctl(['logs', 'timeline', '--allow-open', tampered])
    t.equal(untold.code, 1)
    t.match(untold.stderr, /^hemctl logs timeline: the files do not verify; nothing in them is replayed:\n/)
    t.equal(untold.stdout, '')

    const live = await hemctl(['logs', 'verify'])
    t.equal(live.code, 0, live.stdout + live.stderr)
    t.match(
      live.stdout,
      /\nopen: [0-9a-f]{8} ends with \d+ unsealed record\(s\)\n/,
      'the open tail is allowed, and named by its id',
    )
    t.match(live.stdout, /\nOK\n$/)
    const liveTold = await hemctl(['logs', 'timeline', '--type', 'LOGGER_LIST_LOG', '--json'])
    t.equal(liveTold.code, 0, liveTold.stderr)
    const events = liveTold.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    t.ok(events.length >= 3, 'the lists of list, pull, verify and this timeline')
    t.same(
      new Set(events.map((event) => `${event.name} ${event.subject} ${event.result}`)),
      new Set(['LOGGER_LIST_LOG U OK']),
      'only list records',
    )
    t.match((await hemctl(['logs', 'verify', '--key-file', 'x'])).stderr, /--key-file goes with a DIR/)
  })

  await t.test('upgrade ui: upload, check, install; a stranger image is rejected', async (t) => {
    const image = await imageOf(join(root, 'app'), 'ui', 'ui-hemctl', ['P'])
    const file = join(root, 'webroot.tar')
    await writeFile(file, image)
    const staged = await hemctl(['upgrade', 'ui', file, '--no-install', '--json'])
    t.equal(staged.code, 0, staged.stderr)
    t.same(JSON.parse(staged.stdout), {
      kind: 'ui',
      bytes: image.length,
      verified: true,
      installed: false,
      reboot: false,
    })
    t.equal(
      staged.stderr,
      `upload ${image.length} bytes sent\ncheck verified\n`,
      'without a terminal, one line per step',
    )
    t.notOk('uis' in (await call(`${o.base}/api/system/version`)).json, 'not installed')

    const installed = await hemctl(['upgrade', 'ui', file], { tty: true })
    t.equal(installed.code, 0, 'installed')
    t.equal(installed.stdout, `installed ${file}\n`)
    t.match(installed.stderr, /^\r\x1b\[Kupload \[#+-*\] \d+% /, 'on a terminal, a bar')
    t.match(installed.stderr, /\r\x1b\[Kcheck [|/\\-] (started|running|verified)/, 'and a spinner')
    t.match(installed.stderr, /\r\x1b\[Kcheck verified\n$/)
    t.equal((await call(`${o.base}/api/system/version`)).json.uis, createHash('sha256').update(image).digest('hex'))
    t.equal((await call(`${o.base}/`)).text, '<h1>hemctl</h1>', 'the app is served')

    const stranger = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const foreign = join(root, 'foreign.tar')
    await writeFile(
      foreign,
      await buildImage(
        { kind: 'ui', hardware: ['P'], floor: 0, version: 'evil' },
        await packDirectory(join(root, 'app')),
        stranger,
      ),
    )
    const rejected = await hemctl(['upgrade', 'ui', foreign])
    t.equal(rejected.code, 1)
    t.match(rejected.stderr, /\nhemctl upgrade ui: the device rejected the image: .*signature/)
    t.equal(rejected.stdout, '')

    const missing = await hemctl(['upgrade', 'ui', join(root, 'nope.tar')])
    t.equal(missing.code, 2)
    t.match(missing.stderr, /^hemctl upgrade ui: cannot read /)
  })
})

t.test('E: no log files to list or pull; firmware that is no build, then a build', async (t) => {
  const root = t.testdir({ app: { 'index.html': 'x' } })
  const o = await owned(t, { variant: 'E', dataDir: join(root, 'device') })
  const hemctl = hemctlOf(o, root)
  const listed = await hemctl(['logs', 'list'])
  t.equal(listed.code, 1)
  t.match(listed.stderr, /^hemctl logs list: GET \/api\/logger\/list\/0: the device answered 404/)
  const out = join(root, 'logs')
  const pulled = await hemctl(['logs', 'pull', '--out', out])
  t.equal(pulled.code, 1)
  t.equal(
    pulled.stderr,
    'hemctl logs pull: the device lists no log files: an E device serves only its log key, not its files; ' +
      `the log key is saved in ${join(out, 'log-key.b64')}\n`,
  )
  t.same((await readdir(out)).sort(), ['head.json', 'log-key.b64'], 'the key and the signed head')

  const file = join(root, 'firmware.bin')
  await writeFile(file, await imageOf(join(root, 'app'), 'fw', '9.0.0', ['E']))
  const upgraded = await hemctl(['upgrade', 'fw', file])
  t.equal(upgraded.code, 1, 'verified, but refused at install')
  t.match(
    upgraded.stderr,
    new RegExp(
      /check verified\nhemctl upgrade fw: GET \/api\/system\/upgrade\/install_fw: /.source +
        /the device answered 406 \(.*no bootable build/.source,
    ),
  )

  const build = join(root, 'build.bin')
  t.equal(await firmwareImage(build, '7.0.0', '--hardware', 'E'), 0)
  const startups = async () =>
    (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.STARTUP).length
  const before = await startups()
  const installed = await hemctl(['upgrade', 'fw', build])
  t.equal(installed.code, 0, installed.stderr)
  t.equal(installed.stdout, `installed ${build}; the device is rebooting into it\n`)
  // In-process, the device restarts in place (the new slot waits for the next start of hemd).
  await until(
    'back after the reboot',
    async () =>
      (await startups()) > before &&
      (await call(`${o.base}/api/system/status`).catch(() => ({ status: 0 }))).status === 200,
  )
})
