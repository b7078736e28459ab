// hemctl backup, run in-process against real devices: the backup passphrase (typed twice, never from argv), a
// backup file written with its progress lines, its restore onto a fresh second device that then lists the same
// keys, and the refusals told in words.
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { main } from '../cli/hemctl/cli.js'
import type { HemctlIo } from '../cli/hemctl/context.js'
import { readBackupHeader } from '../protocol/index.js'
import { bootDevice } from './helpers/device.js'
import { MASTER_PASS, owned, ownerClient, USER_PASS } from './helpers/owner.js'

const BACKUP_PASS = 'a backup passphrase for hemctl'

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** hemctl in-process; `typed` answers the secret prompts in turn, `answered` the confirmations; both are recorded. */
function hemctl(configHome: string, url: string, env: Record<string, string> = {}) {
  const prompts: string[] = []
  const run = async (argv: string[], o: { typed?: string[]; answered?: string[] } = {}): Promise<Run> => {
    const out = { stdout: '', stderr: '' }
    const typed = [...(o.typed ?? [])]
    const answered = [...(o.answered ?? [])]
    const io: HemctlIo = {
      stdout: { write: (text: string | Uint8Array) => (out.stdout += String(text)) },
      stderr: { write: (text: string) => (out.stderr += text) },
      env: { HEM_PASSPHRASE: USER_PASS, HEM_MASTER_PASSPHRASE: MASTER_PASS, XDG_CONFIG_HOME: configHome, ...env },
      askSecret: async (prompt) => (prompts.push(prompt), typed.shift()),
      ...(o.answered ? { ask: async (question: string) => (prompts.push(question), answered.shift()) } : {}),
      stdin: (async function* () {})(),
      stderrIsTTY: false,
    }
    return { code: await main([...argv, '--url', url, '--insecure'], io), ...out }
  }
  return { run, prompts }
}

t.test('help, and what is refused before anything is asked of a device', async (t) => {
  const dir = t.testdir({ 'not-a-backup.bin': 'hello', 'taken.hembackup': 'x' })
  const { run } = hemctl(join(dir, 'config'), 'https://127.0.0.1:9')
  for (const command of ['backup', 'backup passphrase', 'backup create', 'backup restore']) {
    const help = await run([...command.split(' '), '--help'])
    t.equal(help.code, 0, `${command} --help`)
    t.match(help.stdout, new RegExp(`^Usage: hemctl ${command}`))
  }
  t.match((await run(['backup', 'passphrase', '--help'])).stdout, /never taken from the command line/)
  for (const [argv, message] of [
    [['backup', 'passphrase', '--passphrase', BACKUP_PASS], /Unknown option '--passphrase'/],
    [['backup', 'restore', 'f', '--backup-passphrase', BACKUP_PASS], /Unknown option '--backup-passphrase'/],
    [['backup', 'passphrase', BACKUP_PASS], /Unexpected argument/],
    [['backup', 'restore'], /the backup FILE is needed/],
    [['backup', 'restore', join(dir, 'not-a-backup.bin'), '--yes'], /is not a backup this hemctl reads/],
    [['backup', 'restore', join(dir, 'missing'), '--yes'], /cannot read/],
    [['backup', 'create', '--out', join(dir, 'taken.hembackup')], /taken.hembackup exists: give --force/],
  ] as const) {
    const refused = await run([...argv])
    t.equal(refused.code, 2, argv.join(' '))
    t.match(refused.stderr, message)
  }
  const short = await hemctl(join(dir, 'config'), 'https://127.0.0.1:9', { HEM_BACKUP_PASSPHRASE: 'short' }).run([
    'backup',
    'passphrase',
  ])
  t.match(short, { code: 2, stderr: /at least 12 bytes \(this one has 5\)/ }, 'checked before the master logs in')
  const differ = await run(['backup', 'passphrase'], { typed: [BACKUP_PASS, `${BACKUP_PASS}!`] })
  t.match(differ, { code: 2, stderr: /the backup passphrases typed differ/ })
  t.notMatch(`${short.stderr}${differ.stderr}`, BACKUP_PASS, 'no passphrase in what hemctl says')
})

t.test('back up A, restore onto a fresh B: B lists the same keys', async (t) => {
  const dir = t.testdir({ config: {} })
  const a = await owned(t, { dataDir: join(dir, 'a') })
  const owner = ownerClient(a.https)
  for (const [label, type] of [
    ['signing', 'ED25519'],
    ['sealing', 'AES256'],
    ['agreeing', 'SECP256R1'],
  ] as const)
    await owner.createKey({ label, type })
  const onA = hemctl(join(dir, 'config'), a.https)

  const early = await onA.run(['backup', 'create', '--out', join(dir, 'early.hembackup')])
  t.match(early, { code: 1, stderr: /no backup passphrase is set: set one first with 'hemctl backup passphrase'/ })
  const set = await onA.run(['backup', 'passphrase'], { typed: [BACKUP_PASS, BACKUP_PASS] })
  t.match(set, { code: 0, stdout: /The backup passphrase is set/ })
  t.same(onA.prompts, ['New backup passphrase: ', 'Repeat the new backup passphrase: '], 'typed twice, unechoed')

  const file = join(dir, 'a.hembackup')
  const made = await onA.run(['backup', 'create', '--out', file, '--progress'])
  t.equal(made.code, 0, made.stderr)
  const bytes = new Uint8Array(await readFile(file))
  t.match(made.stdout, `wrote ${file} (${bytes.length} bytes)`)
  t.match(made.stderr, /^backup (100% of [\d.]+ [KM]?i?B|0 MiB so far)\n/m, 'progress lines when asked (no terminal)')
  t.match(made.stderr, `backup ${bytes.length} bytes received\n`)
  const header = readBackupHeader(bytes)
  t.same([header.devid, header.keys], [a.device.devid, 3], "the file's header names A and its keys")
  const again = await onA.run(['backup', 'create', '--out', file])
  t.match(again, { code: 2, stderr: /exists: give --force/ }, 'an existing file is not replaced')
  const forced = await onA.run(['backup', 'create', '--out', file, '--force'])
  t.equal(forced.code, 0, `unless --force: ${forced.stderr}`)

  const b = await bootDevice(t, { dataDir: join(dir, 'b'), variant: 'E' })
  const onB = hemctl(join(dir, 'config'), b.httpsUrl!, { HEM_BACKUP_PASSPHRASE: BACKUP_PASS })
  const noTerminal = await onB.run(['backup', 'restore', file])
  t.match(noTerminal, { code: 2, stderr: /no terminal to confirm on: give --yes/ })
  const declined = await onB.run(['backup', 'restore', file], { answered: ['n'] })
  t.match(declined, { code: 2, stderr: /not restored/ })
  t.match(declined.stderr, `source device: ${a.device.devid}\ncreated: `, 'the header shown before the question')
  t.match(declined.stderr, /\nkeys: 3\n/)
  const wrong = hemctl(join(dir, 'config'), b.httpsUrl!, { HEM_BACKUP_PASSPHRASE: `not ${BACKUP_PASS}` })
  const refused = await wrong.run(['backup', 'restore', file, '--yes'])
  t.match(refused, { code: 1, stderr: /the backup passphrase is wrong, or the file was altered: nothing was restored/ })
  t.notMatch(refused.stderr, BACKUP_PASS)

  const restored = await onB.run(['backup', 'restore', file, '--progress'], { answered: ['yes'] })
  t.equal(restored.code, 0, restored.stderr)
  t.match(restored.stdout, `restored 3 key(s) from device ${a.device.devid}`)
  t.match(restored.stderr, /^upload 100% of [\d.]+ KiB\n/m, 'the upload progress')
  t.match(onB.prompts, ['Restore this backup onto the device? [y/N] '])

  const listed = async (run: typeof onA.run) => JSON.parse((await run(['keys', 'list', '--json'])).stdout)
  t.same(await listed(onB.run), await listed(onA.run), 'B lists the keys of A, KIDs and all')
  const twice = await onB.run(['backup', 'restore', file, '--yes'])
  t.match(twice, { code: 1, stderr: /the device is personalised: a backup is restored onto a fresh device only/ })

  await writeFile(join(dir, 'altered.hembackup'), Buffer.concat([bytes.subarray(0, -1), Buffer.from([~bytes.at(-1)!])]))
  const c = await bootDevice(t, { dataDir: join(dir, 'c'), variant: 'E' })
  const onC = hemctl(join(dir, 'config'), c.httpsUrl!, { HEM_BACKUP_PASSPHRASE: BACKUP_PASS })
  const altered = await onC.run(['backup', 'restore', join(dir, 'altered.hembackup'), '--yes'])
  t.match(altered, { code: 1, stderr: /the backup passphrase is wrong, or the file was altered/ }, 'an altered file')
})
