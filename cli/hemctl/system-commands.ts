// hemctl's commands about the device itself: identity, status, configuration, lifecycle.
import { readFile } from 'node:fs/promises'
import { type Command, parseOptions, readPassphrase, UsageError } from '../index.js'
import { type HemClient, PinStore, type Status } from '../../client/index.js'
import { DEFAULT_HOSTNAME, INIT_FIXED_CHOICES, type MirrorLag, P_INIT_DEFAULTS } from '../../protocol/index.js'
import {
  clientCommand,
  configDir,
  connect,
  connectionOptions,
  DEFAULT_URL,
  fields,
  onePositional,
  print,
  usageText,
  type HemctlIo,
} from './context.js'
import { group } from './group.js'
import { REMOTE_LOGIN_USAGE, REMOTE_ONLY, remoteLogin, remoteLoginOptions } from './remote-login.js'

/** A command that takes the connection options only and prints what `ask` answers. */
function query(summary: string, synopsis: string, about: string, ask: (client: HemClient) => Promise<unknown>) {
  return clientCommand({ summary, synopsis, about }, async (client) => ({ value: await ask(client) }))
}

function wholeNumber(option: string, text: string): number {
  const n = text.trim() === '' ? NaN : Number(text)
  if (!Number.isSafeInteger(n) || n < 0)
    throw new UsageError(`${option} must be a whole number (decimal or 0x hex), not ${JSON.stringify(text)}`)
  return n
}

const status = clientCommand(
  {
    summary: 'show the device status (fail state, temperature, disks, journal mirror...)',
    synopsis: 'status',
    about: 'Shows GET /api/system/status (no login needed).',
  },
  async (client) => {
    const value = await client.status()
    const { mirror, origin, ...rest } = value
    if (!mirror && !origin) return { value }
    const told = [
      ...(mirror ? [`mirror: ${mirrorText(mirror)}\n`] : []),
      ...(origin
        ? ['origin: * (WARNING: every web page its owner visits may call the device routes that need no token)\n']
        : []),
    ]
    return { value, text: `${fields(rest)}${told.join('')}` }
  },
)

/** The journal mirror's state in words; a stream that stopped matching is an error the operator must act on. */
function mirrorText(mirror: NonNullable<Status['mirror']>): string {
  if (mirror.state === 'rollback')
    return (
      `ERROR: the journal went back behind ${mirror.stream} (${mirror.detail ?? 'no detail'}): the device's data ` +
      'was rolled back (fls_state 0x08); nothing is mirrored until the next stream generation is started'
    )
  if (mirror.state !== 'mismatch') return `${mirror.state} (${mirror.stream})${lagText(mirror.lag)}`
  return (
    `ERROR: ${mirror.stream} does not continue the journal (${mirror.detail ?? 'no detail'}); nothing is mirrored ` +
    'until the next stream generation is started (hemd --stream-generation, docs/operations.md)'
  )
}

function lagText(lag: MirrorLag | undefined): string {
  if (!lag?.records) return ''
  const since = lag.oldest === undefined ? '' : `, the oldest from ${new Date(lag.oldest * 1000).toISOString()}`
  return `, ${lag.records} record${lag.records === 1 ? '' : 's'} behind${since}`
}

const version = query(
  'show the hardware, firmware, bootloader and app versions',
  'version',
  'Shows GET /api/system/version.',
  (client) => client.version(),
)

const openapi = clientCommand(
  {
    summary: 'show the API description (OpenAPI 3.0)',
    synopsis: 'openapi',
    about: "Shows GET /api/openapi.json, the device's routes as an OpenAPI 3.0 document (no login needed).",
  },
  async (client) => {
    const value = await client.openapi()
    return { value, text: `${JSON.stringify(value, null, 2)}\n` }
  },
)

const metrics = clientCommand(
  {
    summary: 'show the Prometheus metrics',
    synopsis: 'metrics',
    about: "Shows GET /metrics, the device's Prometheus text exposition (docs/metrics.md; scope system:metrics).",
  },
  async (client) => {
    const text = await client.metrics()
    return { value: text, text }
  },
)

// ---- personalisation and login ----

/** A new passphrase: asked twice on a terminal, since a typo there would lock its owner out. */
async function newPassphrase(
  io: HemctlIo,
  whose: 'user' | 'master',
  variable: string,
  file: string | undefined,
): Promise<string> {
  const passphrase = await readPassphrase(io, variable, file, `New ${whose} passphrase: `)
  if (!passphrase) throw new UsageError(`${file} is empty`)
  if (
    file === undefined &&
    !io.env[variable] &&
    (await io.askSecret(`Repeat the new ${whose} passphrase: `)) !== passphrase
  ) {
    throw new UsageError(`the ${whose} passphrases typed differ`)
  }
  return passphrase
}

const P_ONLY = {
  ip: P_INIT_DEFAULTS.ip,
  'storage-mode': `0x${P_INIT_DEFAULTS.storage_mode.toString(16)}`,
  'disk0-sectors': String(P_INIT_DEFAULTS.storage_disk0size),
} as const

const init: Command<HemctlIo> = {
  summary: 'personalise a fresh device: its owner, both passphrases, its network',
  usage: usageText(
    'init --user NAME --email EMAIL [OPTIONS] [CONNECTION OPTIONS]',
    `Makes a fresh device yours. Passphrases are never taken from the command line: the user's comes
from --passphrase-file FILE, else $HEM_PASSPHRASE, else the terminal; the master's from
--master-passphrase-file FILE, else $HEM_MASTER_PASSPHRASE, else the terminal.`,
    `  --user NAME                    the owner's name (at most 64 printable characters)
  --email EMAIL                  the owner's e-mail address
  --hostname HOST                the device's host name (default ${DEFAULT_HOSTNAME}; fixed from now on)
  --origin ORIGIN                the web origin allowed to call the API besides the device's own (default the
                                 origin of --url: no other page; * allows every page the owner visits)
  --ip CIDR                      P: the device's address (default ${P_ONLY.ip}; fixed from now on)
  --storage-mode N               P: the disks' storage mode (default ${P_ONLY['storage-mode']})
  --disk0-sectors N              P: Disk 0's size in sectors (default ${P_ONLY['disk0-sectors']})
  --gen-csr                      have the device make a CSR for its TLS key
  --master-passphrase-file FILE  read the new master passphrase from FILE
`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: {
        ...connectionOptions,
        'master-passphrase-file': { type: 'string' },
        user: { type: 'string' },
        email: { type: 'string' },
        hostname: { type: 'string', default: DEFAULT_HOSTNAME },
        origin: { type: 'string' },
        ip: { type: 'string' },
        'storage-mode': { type: 'string' },
        'disk0-sectors': { type: 'string' },
        'gen-csr': { type: 'boolean', default: false },
      },
    })
    if (!values.user || !values.email) throw new UsageError('init needs --user and --email')
    if (values.master) throw new UsageError('init sets both passphrases: --master does not apply')
    const client = await connect(values, io)
    const isP = (await client.version()).hwv.includes('PPA')
    const pOnly = (Object.keys(P_ONLY) as (keyof typeof P_ONLY)[]).filter((option) => values[option] !== undefined)
    if (!isP && pOnly.length > 0)
      throw new UsageError(`this device has no disks: ${pOnly.map((o) => `--${o}`).join(', ')} only apply to P`)
    const cfg = {
      user: values.user,
      email: values.email,
      hostname: values.hostname,
      // Else the client library's default: the device's own origin.
      ...(values.origin !== undefined ? { origin: values.origin } : {}),
      ...INIT_FIXED_CHOICES,
      ...(values['gen-csr'] ? { gen_csr: true } : {}),
      ...(isP
        ? {
            ip: values.ip ?? P_ONLY.ip,
            storage_mode: wholeNumber('--storage-mode', values['storage-mode'] ?? P_ONLY['storage-mode']),
            storage_disk0size: wholeNumber('--disk0-sectors', values['disk0-sectors'] ?? P_ONLY['disk0-sectors']),
            dnsd: P_INIT_DEFAULTS.dnsd,
          }
        : {}),
    }
    const user = await newPassphrase(io, 'user', 'HEM_PASSPHRASE', values['passphrase-file'])
    const master = await newPassphrase(io, 'master', 'HEM_MASTER_PASSPHRASE', values['master-passphrase-file'])
    const answer = await client.personalise({ user, master }, cfg)
    // The init token is the user's: printed only on request (--json), not left in a terminal's scrollback.
    const { token: _, ...shown } = answer
    const text = Object.entries(shown).map(([key, value]) => `${key}: ${value}\n`)
    text.push(
      "The device is personalised. Log in with 'hemctl login' (the user passphrase) or 'hemctl login --master'.\n",
    )
    print(io, values.json, answer, text.join(''))
    return 0
  },
}

const login: Command<HemctlIo> = {
  summary: 'log in and print a bearer token (for curl and scripts)',
  usage: usageText(
    'login [--scope SCOPE] [--lifetime SECONDS] [CONNECTION OPTIONS]\n' +
      '       hemctl login --remote --cloud URL [--scope SCOPE] [--exp S] [--ctx C] [--note N] [CONNECTION OPTIONS]',
    "Logs in with the user's passphrase (or the master's, --master) and prints a bearer token:\n" +
      '  curl -H "Authorization: Bearer $(hemctl login)" ...\n' +
      'With --remote, a paired authenticator approves the token instead (hemctl auth pair): exit 4 when\n' +
      'it denies, or the request expires; Ctrl-C withdraws the request.',
    `  --scope SCOPE       the token's scope (default system:config)
  --lifetime SECONDS  the token's lifetime (default 3600; the device caps it at 24 h)
${REMOTE_LOGIN_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: {
        ...connectionOptions,
        ...remoteLoginOptions,
        scope: { type: 'string', default: 'system:config' },
        lifetime: { type: 'string' },
      },
    })
    if (values.remote) {
      if (values.lifetime !== undefined) throw new UsageError('with --remote the authenticator grants the lifetime')
      return remoteLogin(values, io)
    }
    const remoteOnly = REMOTE_ONLY.find((option) => values[option] !== undefined)
    if (remoteOnly) throw new UsageError(`--${remoteOnly} goes with --remote`)
    const lifetime = wholeNumber('--lifetime', values.lifetime ?? '3600')
    if (lifetime < 1) throw new UsageError('--lifetime must be at least 1 second')
    const token = await (await connect(values, io, { tokenLifetime: lifetime })).token(values.scope)
    print(io, values.json, { token }, `${token}\n`)
    return 0
  },
}

// ---- configuration and lifecycle ----

/** `text` as JSON when it is JSON (numbers, true, false, objects), else as a string. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const configSet: Command<HemctlIo> = {
  summary: 'change configuration fields',
  usage: usageText(
    'config set FIELD=VALUE... [CONNECTION OPTIONS]',
    `Changes the fields given (POST /api/system/config); the device says whether a reboot applies them.
A VALUE that parses as JSON is sent as such (8, true, {"crt": "..."}), any other as a string:
  hemctl config set user=Grace http_option_dosprot_mode=2`,
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({ args, options: connectionOptions, allowPositionals: true })
    if (positionals.length === 0) throw new UsageError('give at least one FIELD=VALUE')
    const changes: Record<string, unknown> = {}
    for (const assignment of positionals) {
      const at = assignment.indexOf('=')
      if (at < 1) throw new UsageError(`${JSON.stringify(assignment)} is not FIELD=VALUE`)
      const field = assignment.slice(0, at)
      if (field === 'wipeout') throw new UsageError("a wipeout erases the device: use 'hemctl wipeout --yes'")
      changes[field] = jsonOrText(assignment.slice(at + 1))
    }
    print(io, values.json, await (await connect(values, io)).setConfig(changes))
    return 0
  },
}

const config = group('hemctl config', 'show or change the configuration', {
  get: query('show every configuration field', 'config get', 'Shows GET /api/system/config.', (client) =>
    client.config(),
  ),
  set: configSet,
})

interface Lifecycle {
  summary: string
  name: string
  about: string
  /** Why --yes is needed, for what cannot be undone. */
  confirm?: string
  act(client: HemClient): Promise<unknown>
  /** What is printed without --json. */
  text: string
}

/** A command that changes the device's life: --yes where it cannot be undone. */
function lifecycle({ summary, name, about, confirm, act, text }: Lifecycle): Command<HemctlIo> {
  return {
    summary,
    usage: confirm
      ? usageText(`${name} --yes [CONNECTION OPTIONS]`, about, '  --yes  confirm\n')
      : usageText(`${name} [CONNECTION OPTIONS]`, about),
    async run(args, io) {
      const { values } = parseOptions({
        args,
        options: { ...connectionOptions, yes: { type: 'boolean', default: false } },
      })
      if (confirm && !values.yes) throw new UsageError(`${confirm}: give --yes to confirm`)
      const answer = await act(await connect(values, io))
      print(io, values.json, answer ?? {}, `${text}\n`)
      return 0
    },
  }
}

const wipeout = lifecycle({
  summary: 'erase keys, disks and configuration: back to a fresh device',
  name: 'wipeout',
  about:
    'Factory reset: the keys, the disks and the configuration are erased, the device reboots fresh\n' +
    '(the journal survives). It cannot be undone.',
  confirm: 'a wipeout erases every key, the disks and the configuration',
  act: (client) => client.wipeout(),
  text: 'The device is wiping out and reboots fresh.',
})

const reboot = lifecycle({
  summary: 'reboot the device (every token dies)',
  name: 'reboot',
  about: 'Reboots the device: every service restarts and every token dies.',
  act: (client) => client.reboot(),
  text: 'The device is rebooting.',
})

const shutdown = lifecycle({
  summary: 'stop the device',
  name: 'shutdown',
  about: 'Stops the device; it stays off until it is started again.',
  confirm: 'the device stays off until someone starts it',
  act: (client) => client.shutdown(),
  text: 'The device is shutting down.',
})

const selftest = query(
  'run every self-test (KATs, entropy, key records) and show the fail state',
  'selftest',
  'Runs GET /api/system/selftest: the known-answer tests, the entropy tests and a check of every stored\n' +
    'key record; a failure raises its bit in fls_state. Shows the answer: timestamps, fls_state, repo_stats.',
  (client) => client.selftest(),
)

const attest = query(
  "show the device's attestation (P)",
  'attest',
  "Shows the enclave's attestation (GET /api/system/config/attestation): {genuine, csr} before\n" +
    'provisioning, {crt, genuine} after. A personalised device asks for a login. P only.',
  async (client) => ((await client.status()).inited === false ? client.attestation() : client.ownedAttestation()),
)

const provision: Command<HemctlIo> = {
  summary: "install the factory's answer to the attestation (P, before personalisation)",
  usage: usageText(
    'provision FILE [CONNECTION OPTIONS]',
    "Posts FILE, the factory's JSON answer ({crt, genuine}), to /api/system/config/provisioning.",
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({ args, options: connectionOptions, allowPositionals: true })
    if (positionals.length !== 1) throw new UsageError('give one FILE')
    const text = await readFile(positionals[0]!, 'utf8').catch((err: Error) => {
      throw new UsageError(`cannot read ${positionals[0]}: ${err.message}`)
    })
    const body = jsonOrText(text)
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new UsageError(`${positionals[0]} does not hold a JSON object`)
    await (await connect(values, io)).provision(body as Record<string, unknown>)
    print(io, values.json, {}, 'The device is provisioned.\n')
    return 0
  },
}

// ---- trusted check-in ----

/** A backend's signed reply: base64url "." base64url, at most as long as the device reads (7000). */
const CHECKED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

const checkin = group('hemctl checkin', "get the device's check-in, or hand it its backend's reply", {
  get: clientCommand(
    {
      summary: "print the device's signed check-in, for its backend to answer",
      synopsis: 'checkin get',
      about:
        'Prints the check of GET /api/system/checkin (no login needed): base64url JSON {devid, nonce, iat}\n' +
        "\".\" the log key's signature. The fleet backend signs its reply to it ('hemctl checkin reply').",
    },
    async (client) => {
      const value = await client.checkin()
      return { value, text: `${value.check}\n` }
    },
  ),
  reply: clientCommand(
    {
      summary: "hand the device its backend's signed reply to a check-in",
      synopsis: 'checkin reply CHECKED',
      about:
        "Posts CHECKED, the backend's signed reply to the device's last check-in, to /api/system/checkin (no\n" +
        'login needed). With trusted_backend on the device acts on it: status OK, LOCKED or SHUTDOWN.',
      operands: (positionals) => {
        const checked = onePositional(positionals, 'the reply (CHECKED)')
        if (checked.length > 7000 || !CHECKED.test(checked))
          throw new UsageError('CHECKED is a signed reply: base64url "." base64url, at most 7000 characters')
        return checked
      },
    },
    async (client, checked) => ({ value: await client.checkinReply(checked) }),
  ),
})

// ---- trust on first use ----

const trustList: Command<HemctlIo> = {
  summary: 'list the pinned certificate fingerprints',
  usage: `Usage: hemctl trust list [--json]\n\nLists the SHA-256 fingerprint pinned for each device origin.\n`,
  async run(args, io) {
    const { values } = parseOptions({ args, options: { json: connectionOptions.json } })
    const pins = await PinStore.inConfigDir(configDir(io)).all()
    const lines = Object.entries(pins).map(([origin, fingerprint]) => `${origin}  ${fingerprint}\n`)
    print(io, values.json, pins, lines.length > 0 ? lines.join('') : 'No certificate is pinned.\n')
    return 0
  },
}

const trustForget: Command<HemctlIo> = {
  summary: "forget the certificate pinned for a device's URL",
  usage: `Usage: hemctl trust forget [URL] [--url URL] [--json]

Forgets the certificate pinned for URL's origin (default --url, else $HEM_URL, else ${DEFAULT_URL}):
the next connection pins what the device presents then. Do it only when you know why it changed.
`,
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      options: { url: connectionOptions.url, json: connectionOptions.json },
      allowPositionals: true,
    })
    if (positionals.length > 1 || (positionals.length === 1 && values.url !== undefined))
      throw new UsageError('give one URL')
    const url = positionals[0] ?? values.url ?? io.env.HEM_URL ?? DEFAULT_URL
    let origin: string
    try {
      origin = new URL(url).origin
    } catch {
      throw new UsageError(`${JSON.stringify(url)} is not a URL`)
    }
    const forgotten = await PinStore.inConfigDir(configDir(io)).forget(origin)
    print(
      io,
      values.json,
      { origin, forgotten },
      forgotten ? `Forgot the certificate pinned for ${origin}.\n` : `No certificate was pinned for ${origin}.\n`,
    )
    return 0
  },
}

const trust = group('hemctl trust', 'list or forget the pinned device certificates', {
  list: trustList,
  forget: trustForget,
})

export const systemCommands: Record<string, Command<HemctlIo>> = {
  init,
  login,
  status,
  version,
  openapi,
  metrics,
  config,
  attest,
  provision,
  selftest,
  reboot,
  shutdown,
  wipeout,
  checkin,
  trust,
}
