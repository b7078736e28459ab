// hemctl's commands on the disks, the audit log and upgrades.
import { access, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { AuditFinding, HEAD_FILE, type InputLoader, KEY_FILE, runTimeline, runVerify } from '../hem-audit/index.js'
import { FetchJournalError, fetchJournal, fetchLogFiles, fetchLogKey, headClaim } from '../../audit/index.js'
import { parseOptions, UsageError, type CliIo, type Command } from '../index.js'
import { NotAcceptableError, type UpgradeKind } from '../../client/index.js'
import {
  clientCommand,
  connect,
  connectionOptions,
  onePositional,
  print,
  readBytes,
  usageText,
  writeBytes,
  type ConnectionValues,
  type HemctlIo,
} from './context.js'
import { group } from './group.js'
import { withProgress } from './progress.js'

// ---- disks (P) ----

function diskOf(positionals: string[]): 0 | 1 {
  const text = onePositional(positionals, 'the disk (0 or 1)')
  if (text !== '0' && text !== '1') throw new UsageError(`'${text.slice(0, 16)}' is no disk: 0 or 1`)
  return Number(text) as 0 | 1
}

const unlock: Command<HemctlIo> = {
  summary: 'unlock Disk N, read-only or (--rw) read-write',
  usage: usageText(
    'disk unlock N [--rw] [CONNECTION OPTIONS]',
    'Unlocks Disk N (0 or 1) of a P device (GET /api/storage/unlock/ro|rw, scope storage:diskN[:rw]).',
    '  --rw               read-write (default read-only)',
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      allowPositionals: true,
      options: { ...connectionOptions, rw: { type: 'boolean', default: false } },
    })
    const disk = diskOf(positionals)
    const mode = values.rw ? 'rw' : 'ro'
    await (await connect(values, io)).unlockDisk(disk, mode)
    print(io, values.json, { disk, mode }, `disk ${disk} unlocked ${mode}\n`)
    return 0
  },
}

const lock = clientCommand(
  {
    summary: 'lock Disk N',
    synopsis: 'disk lock N',
    about: 'Locks Disk N (0 or 1) of a P device (GET /api/storage/lock, scope storage:diskN).',
    operands: diskOf,
  },
  async (client, disk) => {
    await client.lockDisk(disk)
    return { value: { disk, mode: 'locked' }, text: `disk ${disk} locked\n` }
  },
)

// ---- the audit log ----

const list = clientCommand(
  {
    summary: 'list the log file ids, oldest first (P)',
    synopsis: 'logs list',
    about: 'Lists the ids of the log files, oldest first (GET /api/logger/list, scope logger:get; P only).',
  },
  async (client) => {
    const ids = await client.logFiles()
    return { value: ids, text: ids.map((id) => `${id}\n`).join('') }
  },
)

/** What the device's journal says is wrong, or that it cannot be had: exit 1. */
async function finding(io: HemctlIo, name: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work()
  } catch (err) {
    if (!(err instanceof AuditFinding || err instanceof FetchJournalError)) throw err
    io.stderr.write(`hemctl logs ${name}: ${err.message}\n`)
    return 1
  }
}

const pull: Command<HemctlIo> = {
  summary: 'download every log file and the log key (P)',
  usage: usageText(
    'logs pull [--out DIR] [CONNECTION OPTIONS]',
    `Downloads the log public key and every log file, byte for byte, into DIR (scope logger:get):
  DIR/<id>.log        one per log file (existing files of the same id are replaced)
  DIR/${KEY_FILE}    the log public key, base64
  DIR/${HEAD_FILE}      the journal's signed head; the files are saved up to its record
An E device serves its key but not its files: only the key is saved, and the exit status is 1.`,
    '  --out DIR          where to write (default ./hem-logs; created if missing)',
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: { ...connectionOptions, out: { type: 'string', default: 'hem-logs' } },
    })
    const out = values.out
    const keyPath = join(out, KEY_FILE)
    const client = await connect(values, io)
    return finding(io, 'pull', async () => {
      const { publicKey, head } = await fetchLogKey(client)
      await mkdir(out, { recursive: true }).catch((err: Error) => {
        throw new UsageError(`cannot create ${out}: ${err.message}`)
      })
      // Saved first: an E device serves its key but not its files.
      await writeBytes(keyPath, `${Buffer.from(publicKey).toString('base64')}\n`)
      await writeBytes(join(out, HEAD_FILE), `${JSON.stringify(head)}\n`)
      const files = await fetchLogFiles(client, head).catch((err: unknown) => {
        throw err instanceof FetchJournalError
          ? new FetchJournalError(`${err.message}; the log key is saved in ${keyPath}`)
          : err
      })
      for (const file of files) await writeBytes(join(out, `${file.id}.log`), file.bytes)
      const saved = { dir: out, key: keyPath, files: files.map((file) => ({ id: file.id, bytes: file.bytes.length })) }
      const listing = files.map((file) => `${join(out, `${file.id}.log`)}  ${file.bytes.length} bytes\n`).join('')
      const text =
        `fetched ${files.length} log file(s) into ${out}\n${listing}` +
        `log key: ${keyPath}\nverify with: hemctl logs verify --allow-open ${out}\n`
      print(io, values.json, saved, text)
      return 0
    })
  },
}

const sourceOptions = {
  ...connectionOptions,
  'key-file': { type: 'string' },
  'allow-open': { type: 'boolean', default: false },
} as const

const SOURCE_USAGE = `Without DIR, the log files the device serves now are downloaded (scope logger:get, P only) and
used with the device's log key; the newest one may be open. With DIR (as 'hemctl logs pull'
wrote it), the files DIR/*.log are used with the key DIR/${KEY_FILE} and the signed head
DIR/${HEAD_FILE} when there is one.`
const SOURCE_OPTIONS = `  --key-file FILE    with DIR: the log key (default DIR/${KEY_FILE})
  --allow-open       with DIR: the newest file may still be open (as pulled from a running device)`

type AuditRun = (args: string[], io: CliIo, load?: InputLoader) => Promise<number>

/** Runs a hem-audit command on DIR, or on the files the device serves now. */
async function onJournal(
  name: string,
  command: AuditRun,
  values: ConnectionValues & {
    'key-file'?: string | undefined
    'allow-open'?: boolean | undefined
    json?: boolean | undefined
  },
  positionals: string[],
  forwarded: string[],
  io: HemctlIo,
): Promise<number> {
  if (positionals.length > 1) throw new UsageError(`one DIR, not ${positionals.length}`)
  const [dir] = positionals
  const json = values.json ? ['--json'] : []
  if (dir !== undefined) {
    const key = ['--key-file', values['key-file'] ?? join(dir, KEY_FILE)]
    const headPath = join(dir, HEAD_FILE)
    const head = await access(headPath).then(
      () => ['--head', headPath],
      () => [],
    )
    return finding(io, name, () =>
      command([...key, ...head, ...(values['allow-open'] ? ['--allow-open'] : []), ...json, ...forwarded, dir], io),
    )
  }
  if (values['key-file'] !== undefined)
    throw new UsageError("--key-file goes with a DIR: the device's files are read with its own key")
  const fromDevice: InputLoader = async () => {
    const client = await connect(values, io)
    const { publicKey, head, files } = await fetchJournal(client)
    return { publicKey, files, names: new Map(), heads: [headClaim(head)] }
  }
  return finding(io, name, () => command(['--allow-open', ...json, ...forwarded], io, fromDevice))
}

const verify: Command<HemctlIo> = {
  summary: 'verify the audit log: signatures, MACs, chain, seals, links',
  usage: usageText(
    'logs verify [DIR] [--allow-open] [--key-file FILE] [CONNECTION OPTIONS]',
    `Verifies the log files as 'hem-audit verify' does and prints its summary; exit status 1 when
they do not verify.\n${SOURCE_USAGE}`,
    SOURCE_OPTIONS,
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({ args, allowPositionals: true, options: sourceOptions })
    return onJournal('verify', runVerify, values, positionals, [], io)
  },
}

const timelineOptions = {
  type: { type: 'string', multiple: true },
  subject: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  all: { type: 'boolean', default: false },
} as const

const timeline: Command<HemctlIo> = {
  summary: 'tell what happened, one line per event',
  usage: usageText(
    'logs timeline [DIR] [--type T]... [--subject S] [--since TIME] [--until TIME] [--all] [CONNECTION OPTIONS]',
    `Verifies the log files (exit status 1 when they do not verify), then tells what happened, one
line per event, as 'hem-audit timeline' does.\n${SOURCE_USAGE}`,
    `${SOURCE_OPTIONS}
  --type T           only records of this type: a name (KEY_GENERATION, any case) or a number;
                     repeat for several
  --subject S        only records of this subject: U, M or an ExtAuth id ('' for the device's own)
  --since TIME       only records at or after TIME: Unix seconds or ISO 8601 with a zone
  --until TIME       only records at or before TIME
  --all              also the journal's own records: file key, file link, seals
With --json, one JSON object per line.`,
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      allowPositionals: true,
      options: { ...sourceOptions, ...timelineOptions },
    })
    const forwarded = [
      ...(values.type ?? []).flatMap((type) => ['--type', type]),
      ...(values.subject !== undefined ? ['--subject', values.subject] : []),
      ...(values.since !== undefined ? ['--since', values.since] : []),
      ...(values.until !== undefined ? ['--until', values.until] : []),
      ...(values.all ? ['--all'] : []),
    ]
    return onJournal('timeline', runTimeline, values, positionals, forwarded, io)
  },
}

// ---- upgrades ----

function upgrade(kind: UpgradeKind): Command<HemctlIo> {
  const what = kind === 'fw' ? 'firmware' : 'management app (P)'
  const after =
    kind === 'fw'
      ? 'The install reboots the device into the new firmware.'
      : 'The install serves the new app at / at once.'
  return {
    summary: `upload, check and install a signed ${what} image`,
    usage: usageText(
      `upgrade ${kind} FILE [--no-install]${kind === 'fw' ? ' [--allow-downgrade]' : ''} [CONNECTION OPTIONS]`,
      `Uploads the signed image FILE (scope system:upgrade), has the device check it and waits until it
is verified (exit status 1, with the device's reason, when it is rejected), then installs it.
${after}`,
      '  --no-install       stop once the image is verified (it stays staged until the next reboot)' +
        (kind === 'fw'
          ? '\n  --allow-downgrade  confirm installing an older version at the current anti-rollback level'
          : ''),
    ),
    async run(args, io) {
      const { values, positionals } = parseOptions({
        args,
        allowPositionals: true,
        options: {
          ...connectionOptions,
          'no-install': { type: 'boolean', default: false },
          ...(kind === 'fw' ? { 'allow-downgrade': { type: 'boolean', default: false } } : {}),
        },
      })
      const file = onePositional(positionals, 'the image FILE')
      const image = await readBytes(file)
      const client = await connect(values, io)
      await withProgress(io, 'upload', async (line) => {
        await client.upload(kind, image, (sent, total) => line.bar(sent, total))
        line.end(`${image.length} bytes sent`)
      })
      try {
        await withProgress(io, 'check', async (line) => {
          await client.verify(kind, { onPoll: (state) => line.spin(state) })
          line.end('verified')
        })
      } catch (err) {
        if (!(err instanceof NotAcceptableError)) throw err
        const reason = (err.body as { message?: unknown } | undefined)?.message
        io.stderr.write(
          `hemctl upgrade ${kind}: the device rejected the image: ` +
            `${typeof reason === 'string' ? reason : (err.code ?? err.message)}\n`,
        )
        return 1
      }
      const install = !values['no-install']
      if (install) await client.install(kind, { allowDowngrade: values['allow-downgrade'] === true })
      const text = !install
        ? `verified ${file}; not installed (--no-install)\n`
        : kind === 'fw'
          ? `installed ${file}; the device is rebooting into it\n`
          : `installed ${file}\n`
      print(
        io,
        values.json,
        { kind, bytes: image.length, verified: true, installed: install, reboot: install && kind === 'fw' },
        text,
      )
      return 0
    },
  }
}

export const deviceCommands: Record<string, Command<HemctlIo>> = {
  disk: group('hemctl disk', 'unlock and lock the embedded disks (P)', { unlock, lock }),
  logs: group('hemctl logs', 'list, download, verify and tell the audit log', { list, pull, verify, timeline }),
  upgrade: group('hemctl upgrade', 'upload, check and install firmware or the management app', {
    fw: upgrade('fw'),
    ui: upgrade('ui'),
  }),
}
