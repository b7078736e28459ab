import { parseOptions, runCommandLine, UsageError, type CliIo, type CommandLine } from './command-line.js'
import { DeviceRefusedError, DeviceUnreachableError, FingerprintMismatchError } from './errors.js'
import { HemClient } from './hem-client.js'
import { readPassphrase } from './read-passphrase.js'

export interface OwnerCliIo {
  stdout(text: string): void
  stderr(text: string): void
  env: Record<string, string | undefined>
  /** Asks for a secret without echo; undefined when there is no terminal to ask on. */
  askSecret(prompt: string): Promise<string | undefined>
}

const USAGE = `Usage:
  hem-owner init  [--url URL] [--insecure] --user NAME --email EMAIL [--hostname HOST] [--origin ORIGIN]
                  [--ip CIDR] [--storage-mode N] [--disk0-sectors N] [--gen-csr]
  hem-owner login [--url URL] [--insecure] [--scope SCOPE] [--master] [--lifetime SECONDS]

Personalises a fresh device, or logs in and prints a bearer token.
Passphrases are never taken from the command line: the user passphrase from HEM_PASSPHRASE or
--passphrase-file FILE, the master passphrase from HEM_MASTER_PASSPHRASE or
--master-passphrase-file FILE, else they are asked for on the terminal.

Options:
  --url URL         the device (default http://127.0.0.1:8080)
  --insecure        accept the device's self-signed HTTPS certificate
  --scope SCOPE     the token's scope (default system:config)
  --master          log in with the master passphrase (role M) instead of the user's (U)
  --lifetime N      token lifetime in seconds (default 3600; the device caps it at 24 h)
`

interface Io extends CliIo {
  env: OwnerCliIo['env']
  askSecret: OwnerCliIo['askSecret']
}

const cli: CommandLine<Io> = {
  program: 'hem-owner',
  usage: USAGE,
  // One usage text covers both commands, so messages need not name the command.
  prefix: 'hem-owner',
  commands: {
    init: { summary: 'personalise a fresh device', usage: USAGE, run: init },
    login: { summary: 'log in and print a bearer token', usage: USAGE, run: login },
  },
  failure: (err) => (err instanceof DeviceRefusedError || err instanceof DeviceUnreachableError || err instanceof FingerprintMismatchError ? err.message : undefined),
}

export function main(argv: string[], io: OwnerCliIo): Promise<number> {
  return runCommandLine(cli, argv, {
    stdout: { write: io.stdout },
    stderr: { write: io.stderr },
    env: io.env,
    askSecret: (prompt) => io.askSecret(prompt),
  })
}

const common = {
  url: { type: 'string', default: 'http://127.0.0.1:8080' },
  insecure: { type: 'boolean', default: false },
  'passphrase-file': { type: 'string' },
  'master-passphrase-file': { type: 'string' },
} as const

async function init(args: string[], io: Io): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      ...common,
      user: { type: 'string' },
      email: { type: 'string' },
      hostname: { type: 'string', default: 'hem.local' },
      origin: { type: 'string', default: '*' },
      ip: { type: 'string', default: '192.168.7.1/24' },
      'storage-mode': { type: 'string', default: '0x51' },
      'disk0-sectors': { type: 'string', default: '4194304' },
      'gen-csr': { type: 'boolean', default: false },
    },
  })
  if (!values.user || !values.email) throw new UsageError('init needs --user and --email')
  const client = new HemClient({ url: values.url, insecure: values.insecure })
  const hasDisks = (await client.version()).hwv.includes('PPA')
  const cfg: Record<string, unknown> = {
    user: values.user,
    email: values.email,
    hostname: values.hostname,
    origin: values.origin,
    trusted_ts: true,
    trusted_backend: false,
    allow_keysearch: false,
    ...(values['gen-csr'] ? { gen_csr: true } : {}),
    ...(hasDisks
      ? { ip: values.ip, storage_mode: Number(values['storage-mode']), storage_disk0size: Number(values['disk0-sectors']), dnsd: false }
      : {}),
  }
  const user = await readPassphrase(io, 'HEM_PASSPHRASE', values['passphrase-file'], 'New user passphrase: ')
  const master = await readPassphrase(io, 'HEM_MASTER_PASSPHRASE', values['master-passphrase-file'], 'New master passphrase: ')
  const answer = await client.personalise({ user, master }, cfg)
  io.stdout.write(`${JSON.stringify(answer, null, 2)}\n`)
  return 0
}

async function login(args: string[], io: Io): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      ...common,
      scope: { type: 'string', default: 'system:config' },
      master: { type: 'boolean', default: false },
      lifetime: { type: 'string', default: '3600' },
    },
  })
  const lifetime = Number(values.lifetime)
  if (!Number.isInteger(lifetime) || lifetime < 1) throw new UsageError('--lifetime must be a whole number of seconds')
  const passphrase = values.master
    ? await readPassphrase(io, 'HEM_MASTER_PASSPHRASE', values['master-passphrase-file'], 'Master passphrase: ')
    : await readPassphrase(io, 'HEM_PASSPHRASE', values['passphrase-file'], 'Passphrase: ')
  const client = new HemClient({ url: values.url, insecure: values.insecure, passphrase, tokenLifetime: lifetime })
  io.stdout.write(`${await client.token(values.scope)}\n`)
  return 0
}
