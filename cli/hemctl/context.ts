// What every hemctl command shares: its io, the connection options, the client they make, and
// how answers are printed.
import { readFile, writeFile } from 'node:fs/promises'
import { type CliIo, type Command, parseOptions, type PassphraseSources, readPassphrase, UsageError } from '../index.js'
import { defaultConfigDir, HemClient, PinStore } from '../../client/index.js'

export interface HemctlIo extends CliIo, PassphraseSources {
  /** Text, or the raw bytes a decrypt produces. */
  stdout: { write(chunk: string | Uint8Array): unknown }
  /** Input for commands that read data (encrypt, decrypt) when no file is given. */
  stdin: AsyncIterable<Uint8Array>
  /** A line typed on the terminal (a confirmation); undefined, or absent, when there is none to ask on. */
  ask?(question: string): Promise<string | undefined>
  /** Whether stderr is a terminal: progress bars are drawn only there. */
  stderrIsTTY: boolean
  /** A steady clock in ms, for how long a command waits on the cloud (default the host's; tests give theirs). */
  now?(): number
  /** The pause between two polls of the cloud, cut short by `signal` (default a timer). */
  sleep?(ms: number, signal: AbortSignal): Promise<void>
  /** Where Ctrl-C is heard while a command waits on the cloud (default the process's SIGINT). */
  interrupts?: Pick<NodeJS.EventEmitter, 'once' | 'off'>
}

export const DEFAULT_URL = 'https://127.0.0.1:8443'

/** The options every command that talks to a device takes. */
export const connectionOptions = {
  url: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  ca: { type: 'string' },
  json: { type: 'boolean', default: false },
  master: { type: 'boolean', default: false },
  'passphrase-file': { type: 'string' },
} as const

export const CONNECTION_USAGE = `Connection options:
  --url URL               the device (default $HEM_URL, else ${DEFAULT_URL})
  --ca FILE               trust this CA (PEM) for the device's certificate
  --insecure              accept any certificate (no pinning; only on a network you trust)
  --master                log in with the master passphrase (role M) instead of the user's
  --passphrase-file FILE  read the passphrase from FILE (else $HEM_PASSPHRASE or
                          $HEM_MASTER_PASSPHRASE, else it is asked for on the terminal)
  --json                  print the answer as JSON
  -h, --help              show this help
Without --ca or --insecure, the device's certificate is pinned at the first connection to its
URL ($XDG_CONFIG_HOME/hemctl/known-devices.json) and must not change afterwards.
`

export interface ConnectionValues {
  url?: string | undefined
  insecure?: boolean | undefined
  ca?: string | undefined
  master?: boolean | undefined
  'passphrase-file'?: string | undefined
}

/** The client for the device the options name; the passphrase is read only if a login is needed. */
export async function connect(
  values: ConnectionValues,
  io: HemctlIo,
  o: { tokenLifetime?: number } = {},
): Promise<HemClient> {
  const url = values.url ?? io.env.HEM_URL ?? DEFAULT_URL
  if (values.insecure && values.ca !== undefined) throw new UsageError('give --insecure or --ca, not both')
  const ca =
    values.ca !== undefined
      ? await readFile(values.ca).catch((err: Error) => usage(`cannot read the CA file: ${err.message}`))
      : undefined
  const variable = values.master ? 'HEM_MASTER_PASSPHRASE' : 'HEM_PASSPHRASE'
  const prompt = values.master ? 'Master passphrase: ' : 'Passphrase: '
  try {
    return new HemClient({
      url,
      ...(ca ? { ca } : values.insecure ? { insecure: true } : { pins: PinStore.inConfigDir(configDir(io)) }),
      passphrase: () => readPassphrase(io, variable, values['passphrase-file'], prompt),
      ...o,
    })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

export function configDir(io: HemctlIo): string {
  return defaultConfigDir(io.env)
}

function usage(message: string): never {
  throw new UsageError(message)
}

/** A command's usage: its synopsis, what it does, its own options, then the connection options. */
export function usageText(synopsis: string, about: string, options = ''): string {
  return `Usage: hemctl ${synopsis}\n\n${about}\n\n${options ? `Options:\n${options}\n` : ''}${CONNECTION_USAGE}`
}

export function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? `${what} is needed` : `one ${what}, not ${positionals.length}`)
  return positionals[0]!
}

/** A file the user named; one that cannot be read is a usage error. */
export async function readBytes(file: string): Promise<Uint8Array> {
  return new Uint8Array(await readFile(file).catch((err: Error) => usage(`cannot read ${file}: ${err.message}`)))
}

export async function writeBytes(file: string, data: Uint8Array | string): Promise<void> {
  await writeFile(file, data).catch((err: Error) => usage(`cannot write ${file}: ${err.message}`))
}

/** The answer as JSON with --json, else as `text` (default: one `field: value` line per field). */
export function print(io: HemctlIo, json: boolean | undefined, value: unknown, text?: string): void {
  if (json) return void io.stdout.write(`${JSON.stringify(value ?? null, null, 2)}\n`)
  io.stdout.write(text ?? fields(value))
}

/** One `field: value` line per field (objects as JSON). */
export function fields(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (typeof value !== 'object') return `${String(value)}\n`
  return Object.entries(value)
    .map(
      ([key, field]) =>
        `${key}: ${typeof field === 'object' && field !== null ? JSON.stringify(field) : String(field)}\n`,
    )
    .join('')
}

/** What a command shows: `value` with --json, else `text` (default: one `field: value` line per field). */
export interface Shown {
  value: unknown
  text?: string
}

/**
 * A command that takes the connection options and, when `operands` reads them (before connecting,
 * so that a usage error asks for no login), positionals; it prints what `act` shows.
 */
export function clientCommand<A = undefined>(
  spec: { summary: string; synopsis: string; about: string; operands?: (positionals: string[]) => A },
  act: (client: HemClient, operands: A) => Promise<Shown>,
): Command<HemctlIo> {
  return {
    summary: spec.summary,
    usage: usageText(`${spec.synopsis} [CONNECTION OPTIONS]`, spec.about),
    async run(args, io) {
      const allowPositionals = spec.operands !== undefined
      const { values, positionals } = parseOptions({ args, allowPositionals, options: connectionOptions })
      const operands = spec.operands?.(positionals) as A
      const shown = await act(await connect(values, io), operands)
      print(io, values.json, shown.value, shown.text)
      return 0
    },
  }
}
