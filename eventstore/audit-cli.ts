// hem-audit: offline forensics on exported journal files. A thin shell over eventstore/:
// each subcommand parses its arguments, loads files and prints what the library found.

import { readdir, readFile, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { formatProblem } from './format-problem.js'
import type { VerifyResult } from './types.js'
import { verifyJournal, type JournalFile } from './verify-journal.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
}

interface Command {
  summary: string
  usage: string
  run(args: string[], io: CliIo): Promise<number>
}

/** Bad invocation: exit code 2, message and usage on stderr. */
class UsageError extends Error {}

const VERIFY_USAGE = `Usage: hem-audit verify [--key BASE64 | --key-file FILE] [--allow-open] [--json] FILES|DIR...

Verifies journal files with the log public key (GET /api/logger/key): every line's MAC, the
signed file keys, the hash chain, every seal and the links between files. A DIR means every
*.log file in it. Problems print as FILE:seq N: message (N in hex, as in the file).

  --key BASE64      the Ed25519 log public key, base64 (standard or url-safe)
  --key-file FILE   a file holding that key as base64 text or as the raw 32 bytes
  --allow-open      the newest file may still be open (no close seal yet)
  --json            print the result as JSON
  -h, --help        show this help

Exit status: 0 verified, 1 problems found, 2 usage error.
`

const commands: Record<string, Command> = {
  verify: { summary: 'check signatures, MACs, chain, seals and links of journal files', usage: VERIFY_USAGE, run: runVerify },
}

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length))
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`)
  return `Usage: hem-audit COMMAND [OPTIONS] FILES|DIR...\n\nCommands:\n${lines.join('\n')}\n\nRun 'hem-audit COMMAND --help' for a command's options.\n`
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv
  if (name === '--help' || name === '-h') {
    io.stdout.write(usage())
    return 0
  }
  const command = name === undefined ? undefined : commands[name]
  if (!command) {
    io.stderr.write(`${name === undefined ? 'hem-audit: no command given' : `hem-audit: unknown command '${name}'`}\n\n${usage()}`)
    return 2
  }
  try {
    return await command.run(args, io)
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    io.stderr.write(`hem-audit ${name}: ${err.message}\n\n${command.usage}`)
    return 2
  }
}

function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

async function runVerify(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    key: { type: 'string' },
    'key-file': { type: 'string' },
    'allow-open': { type: 'boolean' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  })
  if (values.help) {
    io.stdout.write(VERIFY_USAGE)
    return 0
  }
  const publicKey = await loadKey(values.key, values['key-file'])
  if (positionals.length === 0) throw new UsageError('no files given')
  const { files, names } = await loadFiles(positionals)
  const result = verifyJournal(files, publicKey, { allowOpenTail: values['allow-open'] ?? false })
  io.stdout.write(values.json ? renderJson(result, names) : renderText(result, names))
  return result.ok ? 0 : 1
}

function decodeKey(text: string): Uint8Array | undefined {
  const base64 = text.trim().replaceAll('-', '+').replaceAll('_', '/').replace(/=+$/, '')
  if (!/^[A-Za-z0-9+/]+$/.test(base64)) return undefined
  const key = Buffer.from(base64, 'base64')
  return key.length === 32 ? new Uint8Array(key) : undefined
}

async function loadKey(text: string | undefined, file: string | undefined): Promise<Uint8Array> {
  if (text !== undefined && file !== undefined) throw new UsageError('give --key or --key-file, not both')
  if (text !== undefined) return decodeKey(text) ?? fail('--key is not a base64 Ed25519 public key (32 bytes)')
  if (file === undefined) throw new UsageError('the log public key is needed: --key or --key-file')
  const bytes = await readFile(file).catch((err: Error) => fail(`cannot read key file: ${err.message}`))
  if (bytes.length === 32) return new Uint8Array(bytes)
  return decodeKey(bytes.toString('utf8')) ?? fail(`${file} holds neither a base64 key nor 32 raw bytes`)
}

function fail(message: string): never {
  throw new UsageError(message)
}

/** Reads the named files and the *.log files of the named directories; `names` maps file id to path. */
async function loadFiles(paths: string[]): Promise<{ files: JournalFile[]; names: Map<string, string> }> {
  const files: JournalFile[] = []
  const names = new Map<string, string>()
  for (const path of paths) {
    const info = await stat(path).catch((err: Error) => fail(`cannot read ${path}: ${err.message}`))
    const members = info.isDirectory()
      ? (await readdir(path).catch((err: Error) => fail(`cannot read ${path}: ${err.message}`))).filter((name) => name.endsWith('.log')).sort().map((name) => join(path, name))
      : [path]
    for (const member of members) {
      const id = basename(member).replace(/\.log$/, '')
      const bytes = await readFile(member).catch((err: Error) => fail(`cannot read ${member}: ${err.message}`))
      files.push({ id, bytes })
      if (!names.has(id)) names.set(id, member)
    }
  }
  if (files.length === 0) throw new UsageError(`no *.log files in ${paths.join(', ')}`)
  return { files, names }
}

const iso = (seconds: number | undefined): string | null => (seconds === undefined ? null : new Date(seconds * 1000).toISOString())

function renderText(result: VerifyResult, names: Map<string, string>): string {
  const { summary } = result
  const lines = [
    `files: ${summary.files}, records: ${summary.records}, seals: ${summary.seals}`,
    `first record: ${iso(summary.firstTime) ?? '-'}, last record: ${iso(summary.lastTime) ?? '-'}`,
  ]
  if (summary.openTail) {
    const name = names.get(summary.openTail.file) ?? summary.openTail.file
    lines.push(`open: ${name} ends with ${summary.openTail.records} unsealed record(s)`)
  }
  for (const problem of result.problems) lines.push(formatProblem(problem, names.get(problem.file)))
  lines.push(result.ok ? 'OK' : `FAILED: ${result.problems.length} problem(s)`)
  return `${lines.join('\n')}\n`
}

function renderJson(result: VerifyResult, names: Map<string, string>): string {
  const { summary } = result
  const problems = result.problems.map((p) => ({ ...p, path: names.get(p.file) ?? p.file }))
  const json = { ok: result.ok, summary: { ...summary, firstTimeIso: iso(summary.firstTime), lastTimeIso: iso(summary.lastTime) }, problems }
  return `${JSON.stringify(json, null, 2)}\n`
}
