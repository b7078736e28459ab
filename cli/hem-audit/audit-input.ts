// What every offline hem-audit command reads: the log public key and the journal files, and how
// it names what it found in them.

import { readdir, readFile, stat } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { text as streamText } from 'node:stream/consumers'
import { UsageError, type CliIo } from '../index.js'
import {
  formatProblem,
  type HeadClaim,
  JournalReplayError,
  TamperedJournalError,
  type VerifyOptions,
} from '../../eventstore/index.js'
import { headClaim, SignedHeadError } from '../../audit/index.js'
import type { JournalFile, VerifyProblem } from '../../protocol/index.js'
import { AuditFinding, usage } from './audit-finding.js'
import type { Environment, InputValues } from './input-values.js'

/** The options the offline commands share. */
export const inputOptions = {
  key: { type: 'string' },
  'key-file': { type: 'string' },
  'allow-open': { type: 'boolean' },
  'allow-missing-start': { type: 'boolean' },
  head: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  stream: { type: 'string' },
  device: { type: 'string' },
  'stream-generation': { type: 'string' },
  domain: { type: 'string' },
  'tls-ca': { type: 'string' },
} as const

export const INPUT_HELP = `  --key BASE64      the Ed25519 log public key, base64 (standard or url-safe)
  --key-file FILE   a file holding that key as base64 text or as the raw 32 bytes
  --allow-open      the newest file may still be open (no close seal yet), as on a running device,
                    whose newest file is sealed only every 256 records or 30 s and closed at
                    shutdown; its records after the last seal are still unverified (a problem
                    each) unless a signed head covers them (--head, or a stream's signatures)
  --head FILE|-     the journal's signed head as GET /api/logger/key gives it (its \`head\`, or
                    the whole answer), JSON, from FILE or stdin: it must verify with the log key
                    and the files must reach its record with its chain head (else they were cut
                    at their end, or went back behind it); it covers the records up to it. May
                    be given again: a head saved earlier shows a device's data rolled back
  --allow-missing-start
                    the first file may link to older files not given (deleted by the owner, or
                    not fetched); without it, missing oldest files are a problem
  --stream URL --device DEVID
                    read the device's journal from its stream on the fleet backend (nats:// URL
                    of the backend's JetStream) instead of from files; problems of the stream
                    itself name the stream's message sequence and the FILE:seq it holds
  --stream-generation N
                    with --stream: generation N of the device's stream (default 1; from 2 on
                    HEM_JOURNAL_<DEVID>_N, started after a mismatch)
  --domain NAME     the backend's JetStream domain, when not the one of the server at URL
  --tls-ca FILE     the CA certificate (PEM) a tls:// backend's certificate is checked against
                    (default: the system's); the backend's user and password come from
                    HEM_NATS_USER and HEM_NATS_PASSWORD, or a token from HEM_NATS_TOKEN`

export interface AuditInput {
  publicKey: Uint8Array
  files: JournalFile[]
  /** Signed heads to check the files against: --head's, a stream's. */
  heads: HeadClaim[]
  /** File id -> the path it was read from. */
  names: Map<string, string>
}

/** The commands that read a journal see the environment only for a backend's credentials. */
export interface AuditIo extends CliIo {
  env?: Environment
}

/** Where an offline command's journal comes from: by default the files and key the command line names. */
export type InputLoader = (values: InputValues, paths: string[], env: Environment) => Promise<AuditInput>

export const loadInput: InputLoader = async (values, paths, env) => {
  const publicKey = await loadKey(values.key, values['key-file'])
  const given = await Promise.all((values.head ?? []).map(loadHead))
  if (values.stream !== undefined || values.device !== undefined) {
    // Loaded only for a stream: the offline commands need no NATS client.
    const { loadStreamFiles, streamSource } = await import('./stream-input.js')
    const { heads, ...stream } = await loadStreamFiles(streamSource(values, paths, env))
    return { publicKey, ...stream, heads: [...given, ...heads] }
  }
  if (paths.length === 0) throw new UsageError('no files given')
  return { publicKey, ...(await loadFiles(paths)), heads: given }
}

/** How the commands verify what they read, from their options and the heads the input brought. */
export function verifyOptions(values: InputValues, input: AuditInput): VerifyOptions {
  return {
    allowOpenTail: values['allow-open'] ?? false,
    allowMissingStart: values['allow-missing-start'] ?? false,
    heads: input.heads,
  }
}

async function loadHead(path: string): Promise<HeadClaim> {
  const from = path === '-' ? 'stdin' : path
  // Not /dev/stdin: a stdin that is a socket (a child of node with piped stdio) cannot be opened by path.
  const text = await (path === '-' ? streamText(process.stdin) : readFile(path, 'utf8')).catch((err: Error) =>
    usage(`cannot read --head ${from}: ${err.message}`),
  )
  try {
    return headClaim(JSON.parse(text), `the signed head of ${from}`)
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof SignedHeadError)
      return usage(`--head ${from} is not a signed head {file, seq, head, sig}: ${err.message}`)
    throw err
  }
}

function decodeKey(text: string): Uint8Array | undefined {
  const base64 = text.trim().replaceAll('-', '+').replaceAll('_', '/').replace(/=+$/, '')
  if (!/^[A-Za-z0-9+/]+$/.test(base64)) return undefined
  const key = Buffer.from(base64, 'base64')
  return key.length === 32 ? new Uint8Array(key) : undefined
}

async function loadKey(text: string | undefined, file: string | undefined): Promise<Uint8Array> {
  if (text !== undefined && file !== undefined) throw new UsageError('give --key or --key-file, not both')
  if (text !== undefined) return decodeKey(text) ?? usage('--key is not a base64 Ed25519 public key (32 bytes)')
  if (file === undefined) throw new UsageError('the log public key is needed: --key or --key-file')
  const bytes = await readFile(file).catch((err: Error) => usage(`cannot read key file: ${err.message}`))
  if (bytes.length === 32) return new Uint8Array(bytes)
  return decodeKey(bytes.toString('utf8')) ?? usage(`${file} holds neither a base64 key nor 32 raw bytes`)
}

/** Reads the named files and the *.log files of the named directories. */
async function loadFiles(paths: string[]): Promise<{ files: JournalFile[]; names: Map<string, string> }> {
  const files: JournalFile[] = []
  const names = new Map<string, string>()
  for (const path of paths) {
    const info = await stat(path).catch((err: Error) => usage(`cannot read ${path}: ${err.message}`))
    const members = info.isDirectory()
      ? (await readdir(path).catch((err: Error) => usage(`cannot read ${path}: ${err.message}`)))
          .filter((name) => name.endsWith('.log'))
          .sort()
          .map((name) => join(path, name))
      : [path]
    for (const member of members) {
      const id = basename(member).replace(/\.log$/, '')
      const bytes = await readFile(member).catch((err: Error) => usage(`cannot read ${member}: ${err.message}`))
      files.push({ id, bytes })
      if (!names.has(id)) names.set(id, member)
    }
  }
  if (files.length === 0) throw new UsageError(`no *.log files in ${paths.join(', ')}`)
  return { files, names }
}

/** A problem as `PATH:seq N: message`, the path being the file's as given. */
export function formatFinding(problem: VerifyProblem, names: Map<string, string>): string {
  return formatProblem(problem, names.get(problem.file))
}

/** Runs `work` on verified files; what the library finds wrong in them becomes an AuditFinding naming the paths. */
export function audited<T>(names: Map<string, string>, work: () => T): T {
  try {
    return work()
  } catch (err) {
    if (err instanceof TamperedJournalError) {
      const lines = err.problems.map((p) => `  ${formatFinding(p, names)}`)
      throw new AuditFinding(`the files do not verify; nothing in them is replayed:\n${lines.join('\n')}`, {
        cause: err,
      })
    }
    if (err instanceof JournalReplayError) {
      throw new AuditFinding(
        formatFinding(
          { file: err.file, ...(err.seq !== undefined ? { seq: err.seq } : {}), message: err.detail },
          names,
        ),
        { cause: err },
      )
    }
    throw err
  }
}

export const iso = (seconds: number | undefined): string | null =>
  seconds === undefined ? null : new Date(seconds * 1000).toISOString()
