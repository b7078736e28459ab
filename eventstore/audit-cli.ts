// hem-audit: offline forensics on exported journal files. A thin shell over eventstore/:
// each subcommand parses its arguments, loads files and prints what the library found.

import { readdir, readFile, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { commandsUsage, parseOptions, runCommandLine, UsageError, type CliIo, type CommandLine } from '../client/command-line.js'
import { formatProblem } from './format-problem.js'
import type { VerifyResult } from './types.js'
import { verifyJournal, type JournalFile } from './verify-journal.js'

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

const commands = {
  verify: { summary: 'check signatures, MACs, chain, seals and links of journal files', usage: VERIFY_USAGE, run: runVerify },
}

const cli: CommandLine = {
  program: 'hem-audit',
  usage: commandsUsage('hem-audit', 'COMMAND [OPTIONS] FILES|DIR...', commands),
  commands,
}

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCommandLine(cli, argv, io)
}

async function runVerify(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      'key-file': { type: 'string' },
      'allow-open': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  })
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
