// hemctl backup: the backup passphrase, a backup file, and its restore onto a fresh device (docs/backup.md).
import { access, writeFile } from 'node:fs/promises'
import { parseOptions, readPassphrase, UsageError, type Command } from '../index.js'
import {
  AlreadyPersonalisedError,
  BadBackupError,
  backupPassphraseProblem,
  NoBackupPassphraseError,
  NothingStagedError,
  PayloadError,
  UnsupportedBackupError,
} from '../../client/index.js'
import { BackupFormatError, readBackupHeader, type BackupHeader } from '../../protocol/index.js'
import {
  connect,
  connectionOptions,
  onePositional,
  print,
  readBytes,
  usageText,
  type ConnectionValues,
  type HemctlIo,
} from './context.js'
import { CommandFailure } from './failure.js'
import { group } from './group.js'
import { withProgress } from './progress.js'

const VARIABLE = 'HEM_BACKUP_PASSPHRASE'

const passphraseOptions = {
  ...connectionOptions,
  'backup-passphrase-file': { type: 'string' },
} as const

const progressOptions = { progress: { type: 'boolean', default: false } } as const

const PASSPHRASE_SOURCES = `The backup passphrase is never taken from the command line: it comes from
--backup-passphrase-file FILE, else $${VARIABLE}, else the terminal.`
const BACKUP_PASSPHRASE_OPTION = '  --backup-passphrase-file FILE  read the backup passphrase from FILE\n'
const PROGRESS_OPTION = '  --progress                     progress lines on stderr even when it is no terminal\n'
const MASTER_LOGIN = `It logs in with the master passphrase (role M; --master is implied): --passphrase-file FILE,
else $HEM_MASTER_PASSPHRASE, else the terminal.`

/** The master's login: the backup routes open to role M only. */
const asMaster = (values: ConnectionValues, io: HemctlIo) => connect({ ...values, master: true }, io)

async function backupPassphrase(io: HemctlIo, file: string | undefined, twice: boolean): Promise<string> {
  const passphrase = await readPassphrase(io, VARIABLE, file, twice ? 'New backup passphrase: ' : 'Backup passphrase: ')
  const problem = backupPassphraseProblem(passphrase)
  if (problem) throw new UsageError(problem)
  // A typo in a new one would make every backup under it unreadable: typed twice on a terminal.
  if (twice && file === undefined && !io.env[VARIABLE]) {
    if ((await io.askSecret('Repeat the new backup passphrase: ')) !== passphrase)
      throw new UsageError('the backup passphrases typed differ')
  }
  return passphrase
}

/** The backup routes' refusals in words, with what to do next (a wrong passphrase and an altered file are one). */
const REFUSALS: [new (...args: never[]) => Error, (err: Error) => string][] = [
  [BadBackupError, () => 'the backup passphrase is wrong, or the file was altered: nothing was restored'],
  [UnsupportedBackupError, (err) => `this device does not read this backup (${err.message}): nothing was restored`],
  [
    AlreadyPersonalisedError,
    () =>
      'the device is personalised: a backup is restored onto a fresh device only ' +
      "(a new one, or one wiped out with 'hemctl wipeout --master --yes')",
  ],
  [NothingStagedError, () => 'the device holds no uploaded backup (did it restart?): run the restore again'],
  [NoBackupPassphraseError, () => "no backup passphrase is set: set one first with 'hemctl backup passphrase'"],
  [PayloadError, (err) => `the device does not take a file this large (${err.message})`],
]

function inWords(err: unknown): never {
  const known = REFUSALS.find(([kind]) => err instanceof kind)
  if (!known) throw err
  throw new CommandFailure(known[1](err as Error), { cause: err })
}

const passphrase: Command<HemctlIo> = {
  summary: 'set or replace the backup passphrase (master)',
  usage: usageText(
    'backup passphrase [--backup-passphrase-file FILE] [CONNECTION OPTIONS]',
    `Sets the passphrase backup files are sealed under, or replaces it (POST /api/system/backup/passphrase,
scope system:backup). It is neither login passphrase: at least 12 bytes; several words are best.
The device keeps only a key derived from it. Backups made before keep the passphrase they were made under.
${PASSPHRASE_SOURCES}
${MASTER_LOGIN}`,
    BACKUP_PASSPHRASE_OPTION,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: passphraseOptions })
    const chosen = await backupPassphrase(io, values['backup-passphrase-file'], true)
    await (await asMaster(values, io)).setBackupPassphrase(chosen)
    print(io, values.json, {}, 'The backup passphrase is set: backups are sealed under it from now on.\n')
    return 0
  },
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  )

/** Writes a new file; an existing one only when `force` says so. */
async function writeNew(file: string, bytes: Uint8Array, force: boolean): Promise<void> {
  await writeFile(file, bytes, { flag: force ? 'w' : 'wx', mode: 0o600 }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(
      err.code === 'EEXIST' ? `${file} exists: give --force to replace it` : `cannot write ${file}: ${err.message}`,
    )
  })
}

const create: Command<HemctlIo> = {
  summary: 'download a backup file of the keys and the configuration (master)',
  usage: usageText(
    'backup create [--out FILE] [--force] [--progress] [CONNECTION OPTIONS]',
    `Has the device make a backup file (GET /api/system/backup, scope system:backup): every key with its
type, label, description and flags, the configuration and the authenticator pairings, sealed under the
backup passphrase ('hemctl backup passphrase' first). The device journals BACKUP with the file's SHA-256.
${MASTER_LOGIN}`,
    `  --out FILE                     where to write (default the name the device suggests, in this directory)
  --force                        replace FILE if it exists
${PROGRESS_OPTION}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: { ...connectionOptions, ...progressOptions, out: { type: 'string' }, force: { type: 'boolean' } },
    })
    // Refused before the device works and the master logs in, when the name is known already.
    if (values.out !== undefined && !values.force && (await exists(values.out)))
      throw new UsageError(`${values.out} exists: give --force to replace it`)
    const client = await asMaster(values, io)
    const backup = await withProgress(
      io,
      'backup',
      async (line) => {
        const made = await client
          .createBackup({ onProgress: (received, total) => line.bytes(received, total) })
          .catch(inWords)
        line.end(`${made.bytes.length} bytes received`)
        return made
      },
      { lines: values.progress },
    )
    const out = values.out ?? backup.filename
    await writeNew(out, backup.bytes, values.force === true)
    print(io, values.json, { file: out, bytes: backup.bytes.length }, `wrote ${out} (${backup.bytes.length} bytes)\n`)
    return 0
  },
}

/** What the file says of itself, before anything is sent: a file that is no backup is refused here. */
function headerOf(file: string, bytes: Uint8Array): BackupHeader {
  try {
    return readBackupHeader(bytes)
  } catch (err) {
    if (err instanceof BackupFormatError)
      throw new UsageError(`${file} is not a backup this hemctl reads: ${err.message}`)
    throw err
  }
}

function describeHeader(h: BackupHeader): string {
  const created = new Date(h.created * 1000).toISOString().replace('.000Z', 'Z')
  return `source device: ${h.devid}\ncreated: ${created}\nkeys: ${h.keys}\n`
}

const restore: Command<HemctlIo> = {
  summary: 'restore a backup file onto a fresh device',
  usage: usageText(
    'backup restore FILE [--yes] [--backup-passphrase-file FILE] [--progress] [CONNECTION OPTIONS]',
    `Restores FILE onto a fresh device (not personalised, or wiped out): it shows the source device, when the
backup was made and its key count, asks to go on (unless --yes), uploads the file and opens it under the
backup passphrase. The device then has the source's owner, keys (same KIDs) and configuration, and its own
identity; log in with the source's passphrases. No login is needed before.
${PASSPHRASE_SOURCES}`,
    `  --yes                          restore without asking
${BACKUP_PASSPHRASE_OPTION}${PROGRESS_OPTION}`,
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      allowPositionals: true,
      options: { ...passphraseOptions, ...progressOptions, yes: { type: 'boolean', default: false } },
    })
    if (values.master) throw new UsageError('a restore needs no login: --master does not apply')
    const file = onePositional(positionals, 'the backup FILE')
    const bytes = await readBytes(file)
    const header = headerOf(file, bytes)
    io.stderr.write(describeHeader(header))
    if (!values.yes) {
      const answer = await io.ask?.('Restore this backup onto the device? [y/N] ')
      if (answer === undefined) throw new UsageError('no terminal to confirm on: give --yes')
      if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('not restored')
    }
    const secret = await backupPassphrase(io, values['backup-passphrase-file'], false)
    const client = await connect(values, io)
    await withProgress(
      io,
      'upload',
      async (line) => {
        await client.stageRestore(bytes, { onProgress: (sent, total) => line.bar(sent, total) }).catch(inWords)
        line.end(`${bytes.length} bytes sent`)
      },
      { lines: values.progress },
    )
    const restored = await client.restore(secret).catch(inWords)
    print(
      io,
      values.json,
      restored,
      `restored ${restored.keys} key(s) from device ${restored.source} (file SHA-256 ${restored.sha256})\n` +
        "The device is the source owner's now: log in with the source device's passphrases.\n",
    )
    return 0
  },
}

export const backupCommands: Record<string, Command<HemctlIo>> = {
  backup: group('hemctl backup', 'set the backup passphrase, make a backup file, restore one onto a fresh device', {
    passphrase,
    create,
    restore,
  }),
}
