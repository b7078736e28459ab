// hem-audit fetch: the one online command. Downloads a device's log files and log key, so that
// the offline commands can work on them.

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type CliIo, parseOptions, type PassphraseSources, readPassphrase, UsageError } from '../index.js'
import { DeviceUnreachableError, HemClient } from '../../client/index.js'
import { AuditFinding, usage } from './audit-finding.js'
import { FetchJournalError, fetchLogFiles, fetchLogKey } from '../../audit/index.js'

export const KEY_FILE = 'log-key.b64'
export const HEAD_FILE = 'head.json'
/** Long enough for a big journal over a slow link; the token can read logs and nothing else. */
const TOKEN_SECONDS = 600

export const FETCH_USAGE =
  'Usage: hem-audit fetch --url URL [--out DIR] [--passphrase-file FILE] ' +
  `[--insecure | --ca FILE]

Logs in to the device with the scope logger:get, then downloads its log public key with the
journal's signed head, and every log file (GET /api/logger/key, /api/logger/list,
/api/logger/:id), byte for byte up to the signed head's record, into DIR:
  DIR/<id>.log        one per log file (existing files of the same id are replaced)
  DIR/${KEY_FILE}    the log public key, base64
  DIR/${HEAD_FILE}      the signed head: the newest record the device vouched for when asked
Records the device writes after the signed head (this download's own reads among them) are
covered by no signature yet and are left for the next download.
An E device serves its key but not its files: only the key is saved, and the exit status is 1.
The passphrase (the user's, or the master's) comes from --passphrase-file, else HEM_PASSPHRASE,
else it is asked for on the terminal; never from the command line. The newest file of a
running device is still open: verify with --allow-open --head DIR/${HEAD_FILE}.

  --url URL               the device, e.g. https://192.168.7.1
  --out DIR               where to write (default ./hem-logs; created if missing)
  --passphrase-file FILE  read the passphrase from FILE
  --insecure              accept the device's self-signed HTTPS certificate
  --ca FILE               trust this CA certificate (PEM) for the device's HTTPS certificate
  -h, --help              show this help

Exit status: 0 fetched, 1 the device refused or could not be reached, 2 usage error.
`

export type FetchIo = CliIo & PassphraseSources

export async function runFetch(args: string[], io: FetchIo): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      url: { type: 'string' },
      out: { type: 'string', default: 'hem-logs' },
      'passphrase-file': { type: 'string' },
      insecure: { type: 'boolean', default: false },
      ca: { type: 'string' },
    },
  })
  const url = deviceUrl(values.url)
  if (values.insecure && values.ca !== undefined) throw new UsageError('give --insecure or --ca, not both')
  const ca =
    values.ca !== undefined
      ? await readFile(values.ca).catch((err: Error) => usage(`cannot read the CA file: ${err.message}`))
      : undefined
  const passphrase = await readPassphrase(io, 'HEM_PASSPHRASE', values['passphrase-file'], 'Passphrase: ')
  const client = new HemClient({
    url,
    passphrase,
    tokenLifetime: TOKEN_SECONDS,
    insecure: values.insecure,
    ...(ca ? { ca } : {}),
  })
  const out = values.out
  const keyPath = join(out, KEY_FILE)
  const headPath = join(out, HEAD_FILE)
  const { publicKey, head } = await reaching(() => fetchLogKey(client))
  await writing(out, () => mkdir(out, { recursive: true }))
  // Saved first: an E device serves its key but not its files.
  await writing(keyPath, () => writeFile(keyPath, `${Buffer.from(publicKey).toString('base64')}\n`))
  await writing(headPath, () => writeFile(headPath, `${JSON.stringify(head)}\n`))
  const files = await reaching(() => fetchLogFiles(client, head)).catch((err: unknown) => {
    if (err instanceof FetchJournalError)
      throw new AuditFinding(`${err.message}; the log key is saved in ${keyPath}`, { cause: err })
    throw err
  })
  const lines = [`fetched ${files.length} log file(s) from ${url} into ${out}`]
  for (const file of files) {
    const path = join(out, `${file.id}.log`)
    await writing(path, () => writeFile(path, file.bytes))
    lines.push(`  ${path}  ${file.bytes.length} bytes`)
  }
  lines.push(
    `log key: ${keyPath}`,
    `signed head: ${headPath}`,
    `verify with: hem-audit verify --allow-open --key-file ${keyPath} --head ${headPath} ${out}`,
  )
  io.stdout.write(`${lines.join('\n')}\n`)
  return 0
}

/** A transport failure (refused connection, bad certificate...) is a finding about the device, not a usage error. */
async function reaching<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (!(err instanceof DeviceUnreachableError)) throw err
    const cause = err.cause as Error & { code?: unknown }
    const hint = /CERT|SIGNATURE|SELF_SIGNED/.test(String(cause.code))
      ? ' (give --ca FILE, or --insecure for a self-signed certificate)'
      : ''
    throw new AuditFinding(`cannot reach the device: ${cause.message}${hint}`, { cause: err })
  }
}

async function writing(path: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work()
  } catch (err) {
    throw new AuditFinding(`cannot write ${path}: ${(err as Error).message}`, { cause: err })
  }
}

function deviceUrl(text: string | undefined): string {
  if (text === undefined) throw new UsageError('--url is needed: the device, e.g. https://192.168.7.1')
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return usage(`--url: '${text.slice(0, 200)}' is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') usage('--url must be http:// or https://')
  if (url.username || url.password) usage('--url must not carry credentials')
  return text.replace(/\/+$/, '')
}
