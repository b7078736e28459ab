// hemctl's commands on keys and ciphers.
import { parseOptions, UsageError, type Command } from '../index.js'
import type { CipherAlg, EncryptInput, KeyEntry, KeySpec } from '../../client/index.js'
import {
  clientCommand,
  connect,
  connectionOptions,
  onePositional,
  print,
  readBytes,
  usageText,
  type HemctlIo,
} from './context.js'
import { readInput, writeOutput } from './data-io.js'
import { group } from './group.js'
import { ECDH_KEYS, TYPE_USAGE } from './key-type-help.js'
import { b64, fromBase64, kidOf, PEER_USAGE, peerOf, peerOptions, required, utf8 } from './operands.js'

// ---- keys ----

const descrOptions = { 'descr-text': { type: 'string' }, 'descr-b64': { type: 'string' } } as const
const DESCR_USAGE = `  --descr-text TEXT  a description (at most 64 bytes, searchable): TEXT's UTF-8 bytes
  --descr-b64 B64    a description given as base64 bytes`
const SPEC_USAGE = `  --label L          the key's label (1-32 printable ASCII characters)
${TYPE_USAGE}
  --mode M           for the SECP curves: ECDH (default), ExDSA or ECDH,ExDSA (any other type
                     ignores it)
${DESCR_USAGE}`

function descrOf(values: {
  'descr-text'?: string | undefined
  'descr-b64'?: string | undefined
}): Uint8Array | undefined {
  const { 'descr-text': text, 'descr-b64': encoded } = values
  if (text !== undefined && encoded !== undefined) throw new UsageError('give --descr-text or --descr-b64, not both')
  return text !== undefined ? utf8(text) : encoded !== undefined ? fromBase64(encoded, '--descr-b64') : undefined
}

const specOptions = {
  label: { type: 'string' },
  type: { type: 'string' },
  mode: { type: 'string' },
  ...descrOptions,
} as const

function specOf(
  values: { label?: string | undefined; type?: string | undefined; mode?: string | undefined } & Parameters<
    typeof descrOf
  >[0],
): KeySpec {
  const descr = descrOf(values)
  return {
    label: required(values.label, '--label'),
    type: required(values.type, '--type'),
    ...(values.mode !== undefined ? { mode: values.mode } : {}),
    ...(descr ? { descr } : {}),
  }
}

function keyTable(keys: KeyEntry[]): string {
  const rows = [
    ['KID', 'TYPE', 'LABEL', 'CREATED'],
    ...keys.map((key) => [
      key.kid,
      key.type,
      key.label,
      new Date(key.created * 1000).toISOString().replace('.000Z', 'Z'),
    ]),
  ]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('')
}

const create: Command<HemctlIo> = {
  summary: 'generate a key in the device; prints its KID',
  usage: usageText(
    'keys create --label L --type T [--mode M] [--descr-text TEXT | --descr-b64 B64] [CONNECTION OPTIONS]',
    'Generates a key (POST /api/keymgmt/create, scope keymgmt:gen) and prints its KID.',
    SPEC_USAGE,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: { ...connectionOptions, ...specOptions } })
    const spec = specOf(values)
    const { kid } = await (await connect(values, io)).createKey(spec)
    print(io, values.json, { kid }, `${kid}\n`)
    return 0
  },
}

const importKey: Command<HemctlIo> = {
  summary: "store someone's public key; prints its KID",
  usage: usageText(
    'keys import --label L --type T (--pubkey-file FILE | --pubkey-b64 B64) [--mode M] ' +
      '[--descr-text TEXT | --descr-b64 B64] [CONNECTION OPTIONS]',
    'Stores a public key (POST /api/keymgmt/import, scope keymgmt:imp) of an asymmetric type: raw for\n' +
      'X25519, X448, Ed25519, Ed448, ML-KEM and ML-DSA, SEC1 (compressed or not) for the SECP curves.\n' +
      'Prints its KID.',
    `  --pubkey-file FILE the public key's raw bytes\n  --pubkey-b64 B64   the public key as base64\n${SPEC_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: {
        ...connectionOptions,
        ...specOptions,
        'pubkey-file': { type: 'string' },
        'pubkey-b64': { type: 'string' },
      },
    })
    const spec = specOf(values)
    const { 'pubkey-file': file, 'pubkey-b64': encoded } = values
    if ((file === undefined) === (encoded === undefined))
      throw new UsageError('give one of --pubkey-file or --pubkey-b64')
    const pubkey = file !== undefined ? await readBytes(file) : fromBase64(encoded!, '--pubkey-b64')
    const { kid } = await (await connect(values, io)).importKey({ ...spec, pubkey })
    print(io, values.json, { kid }, `${kid}\n`)
    return 0
  },
}

const derive: Command<HemctlIo> = {
  summary: 'make a key from an ECDH of a key with a peer; prints its KID',
  usage: usageText(
    'keys derive --kid KID --label L --type T (--peer-kid KID | --pubkey-b64 B64 | --pubkey-file FILE) ' +
      '[--mode M] [--descr-text TEXT | --descr-b64 B64] [CONNECTION OPTIONS]',
    `Derives a new key in the device (POST /api/keymgmt/derive, scope keymgmt:derive): the ECDH
secret of --kid (${ECDH_KEYS}) and the peer, through
HKDF-SHA256 (info "encedo-<TYPE>"), becomes the new key's secret or private scalar. The same
derive twice makes the same key, which the device refuses (exit 1) while it exists. Any type
but ML-KEM and ML-DSA. Prints its KID.`,
    `  --kid KID          the source key (it never leaves the device)\n${PEER_USAGE}\n${SPEC_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: { ...connectionOptions, ...specOptions, ...peerOptions, kid: { type: 'string' } },
    })
    const kid = kidOf(required(values.kid, '--kid'), '--kid')
    const input = { kid, ...specOf(values), ...(await peerOf(values, true)) }
    const { kid: derived } = await (await connect(values, io)).deriveKey(input)
    print(io, values.json, { kid: derived }, `${derived}\n`)
    return 0
  },
}

const list = clientCommand(
  {
    summary: 'list every key: KID, type, label, creation time',
    synopsis: 'keys list',
    about: 'Lists every key, page after page (GET /api/keymgmt/list, scope keymgmt:list).',
  },
  async (client) => {
    const keys = await client.allKeys()
    return { value: keys, text: keyTable(keys) }
  },
)

const kidOperand = (positionals: string[]) => kidOf(onePositional(positionals, 'KID'))

const get = clientCommand(
  {
    summary: "show a key's type, public key, description and update time",
    synopsis: 'keys get KID',
    about: 'Shows a key (GET /api/keymgmt/get/KID, scope keymgmt:get): never its private part.',
    operands: kidOperand,
  },
  async (client, kid) => ({ value: { kid, ...(await client.getKey(kid)) } }),
)

const remove = clientCommand(
  {
    summary: 'delete a key (its slot is overwritten)',
    synopsis: 'keys delete KID',
    about: 'Deletes a key (DELETE /api/keymgmt/delete/KID, scope keymgmt:del); its slot is overwritten.',
    operands: kidOperand,
  },
  async (client, kid) => {
    await client.deleteKey(kid)
    return { value: { kid, deleted: true }, text: `deleted ${kid}\n` }
  },
)

const update: Command<HemctlIo> = {
  summary: "change a key's label and description",
  usage: usageText(
    'keys update KID --label L [--descr-text TEXT | --descr-b64 B64] [CONNECTION OPTIONS]',
    "Sets a key's label and description (POST /api/keymgmt/update, scope keymgmt:upd); without\n" +
      '--descr-text or --descr-b64 the description is cleared.',
    `  --label L          the new label\n${DESCR_USAGE}`,
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      allowPositionals: true,
      options: { ...connectionOptions, label: { type: 'string' }, ...descrOptions },
    })
    const kid = kidOf(onePositional(positionals, 'KID'))
    const label = required(values.label, '--label')
    await (await connect(values, io)).updateKey(kid, label, descrOf(values))
    print(io, values.json, { kid, updated: true }, `updated ${kid}\n`)
    return 0
  },
}

const search: Command<HemctlIo> = {
  summary: 'list the keys whose description matches',
  usage: usageText(
    'keys search (PATTERN | --text TEXT) [CONNECTION OPTIONS]',
    `Lists the keys whose description bytes match (POST /api/keymgmt/search, scope keymgmt:search).
PATTERN is the API's: ^B64 for a prefix, B64$ for a suffix, B64 alone for a substring, B64 being
the bytes in base64. --text TEXT looks for descriptions that start with TEXT.`,
    '  --text TEXT        descriptions starting with TEXT (its UTF-8 bytes)',
  ),
  async run(args, io) {
    const { values, positionals } = parseOptions({
      args,
      allowPositionals: true,
      options: { ...connectionOptions, text: { type: 'string' } },
    })
    if (values.text !== undefined && positionals.length > 0) throw new UsageError('give a PATTERN or --text, not both')
    const pattern = values.text !== undefined ? `^${b64(utf8(values.text))}` : onePositional(positionals, 'PATTERN')
    const client = await connect(values, io)
    const keys: KeyEntry[] = []
    for (;;) {
      const page = await client.searchKeys(pattern, keys.length)
      keys.push(...page.list)
      if (page.list.length === 0 || keys.length >= page.total) break
    }
    print(io, values.json, keys, keyTable(keys))
    return 0
  },
}

// ---- ciphers ----

/** What encrypt writes and decrypt reads: the API's fields, base64, with what decrypting needs again. */
interface Envelope {
  alg: string
  kid: string
  ciphertext: string
  iv?: string
  tag?: string
  aad?: string
  ctx?: string
  ext_kid?: string
  pubkey?: string
}

const cipherOptions = {
  kid: { type: 'string' },
  alg: { type: 'string' },
  in: { type: 'string' },
  out: { type: 'string' },
  'aad-file': { type: 'string' },
  ctx: { type: 'string' },
  'peer-kid': { type: 'string' },
  'pubkey-b64': { type: 'string' },
} as const

const CIPHER_USAGE = `  --kid KID          the key (AES, or an ECDH key with a peer)
  --alg ALG          AES128|AES192|AES256-ECB|CBC|GCM
  --aad-file FILE    GCM: additional authenticated data (at most 64 bytes)
  --ctx TEXT         ECDH: the HKDF context
  --peer-kid KID     ECDH: the peer, a public key stored in the device
  --pubkey-b64 B64   ECDH: the peer's public key, base64`

type CipherValues = { [K in keyof typeof cipherOptions]?: string | undefined }
type CipherParams = Omit<EncryptInput, 'msg'>

/** The cipher's parameters: flags first, else the envelope's (decrypt), else nothing. */
async function cipherParams(values: CipherValues, envelope: Partial<Envelope> = {}): Promise<CipherParams> {
  const alg = required(values.alg ?? envelope.alg, '--alg')
  if (!/^AES(128|192|256)-(ECB|CBC|GCM)$/.test(alg))
    throw new UsageError(`--alg: '${alg.slice(0, 32)}' is not AES128|AES192|AES256-ECB|CBC|GCM`)
  if (values['peer-kid'] !== undefined && values['pubkey-b64'] !== undefined)
    throw new UsageError('give --peer-kid or --pubkey-b64, not both')
  const peerFlag = values['peer-kid'] !== undefined || values['pubkey-b64'] !== undefined
  const extKid = peerFlag ? values['peer-kid'] : envelope.ext_kid
  const pubkey = peerFlag ? values['pubkey-b64'] : envelope.pubkey
  const aad =
    values['aad-file'] !== undefined
      ? await readBytes(values['aad-file'])
      : optional(envelope.aad, "the envelope's aad")
  const ctx = values.ctx !== undefined ? utf8(values.ctx) : optional(envelope.ctx, "the envelope's ctx")
  return {
    alg: alg as CipherAlg,
    kid: kidOf(required(values.kid ?? envelope.kid, '--kid'), '--kid'),
    ...(aad ? { aad } : {}),
    ...(ctx ? { ctx } : {}),
    ...(extKid !== undefined ? { extKid: kidOf(extKid, '--peer-kid') } : {}),
    ...(pubkey !== undefined ? { pubkey: fromBase64(pubkey, '--pubkey-b64') } : {}),
  }
}

function optional(text: string | undefined, what: string): Uint8Array | undefined {
  return text === undefined ? undefined : fromBase64(text, what)
}

const encrypt: Command<HemctlIo> = {
  summary: 'encrypt a file or stdin with a key of the device',
  usage: usageText(
    'encrypt --kid KID --alg ALG [--in FILE] [--out FILE] [--aad-file FILE] [--ctx TEXT] ' +
      '[--peer-kid KID | --pubkey-b64 B64] [CONNECTION OPTIONS]',
    `Encrypts the bytes of FILE, or of stdin (POST /api/crypto/cipher/encrypt, scope keymgmt:use:KID;
at most 2048 bytes), and writes a JSON envelope to stdout or --out:
  {"alg", "kid", "ciphertext", "iv"?, "tag"?, "aad"?, "ctx"?, "ext_kid"?, "pubkey"?}
with base64 fields: what 'hemctl decrypt' needs to decrypt it.`,
    '  --in FILE          the plaintext (default stdin)\n' +
      `  --out FILE         where to write the envelope (default stdout)\n${CIPHER_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: { ...connectionOptions, ...cipherOptions } })
    const params = await cipherParams(values)
    const msg = await readInput(io, values.in)
    const { ciphertext, iv, tag } = await (await connect(values, io)).encrypt({ ...params, msg })
    const envelope: Envelope = {
      alg: params.alg,
      kid: params.kid,
      ciphertext: b64(ciphertext),
      ...(iv ? { iv: b64(iv) } : {}),
      ...(tag ? { tag: b64(tag) } : {}),
      ...(params.aad ? { aad: b64(params.aad) } : {}),
      ...(params.ctx ? { ctx: b64(params.ctx) } : {}),
      ...(params.extKid ? { ext_kid: params.extKid } : {}),
      ...(params.pubkey ? { pubkey: b64(params.pubkey) } : {}),
    }
    await writeOutput(io, values.out, `${JSON.stringify(envelope, null, 2)}\n`)
    return 0
  },
}

function envelopeOf(bytes: Uint8Array): Partial<Envelope> & { ciphertext: string } {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'))
  } catch {
    throw new UsageError("the input is not JSON: give the envelope 'hemctl encrypt' writes")
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError('the envelope is not a JSON object')
  for (const [field, text] of Object.entries(value))
    if (typeof text !== 'string') throw new UsageError(`the envelope's ${field} is not a string`)
  const envelope = value as Partial<Envelope>
  return { ...envelope, ciphertext: required(envelope.ciphertext, "the envelope's ciphertext") }
}

const decrypt: Command<HemctlIo> = {
  summary: "decrypt an envelope 'hemctl encrypt' wrote",
  usage: usageText(
    'decrypt [--in FILE] [--out FILE] [--kid KID] [--alg ALG] [--aad-file FILE] [--ctx TEXT] ' +
      '[--peer-kid KID | --pubkey-b64 B64] [CONNECTION OPTIONS]',
    `Decrypts the JSON envelope of 'hemctl encrypt' read from FILE or stdin (POST
/api/crypto/cipher/decrypt, scope keymgmt:use:KID) and writes the plaintext bytes to stdout or
--out (with --json: {"plaintext": base64}). A flag replaces the envelope's field.`,
    '  --in FILE          the envelope (default stdin)\n' +
      `  --out FILE         where to write the plaintext (default stdout)\n${CIPHER_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: { ...connectionOptions, ...cipherOptions } })
    const envelope = envelopeOf(await readInput(io, values.in))
    const params = await cipherParams(values, envelope)
    const input = {
      ...params,
      msg: fromBase64(envelope.ciphertext, "the envelope's ciphertext"),
      ...(envelope.iv !== undefined ? { iv: fromBase64(envelope.iv, "the envelope's iv") } : {}),
      ...(envelope.tag !== undefined ? { tag: fromBase64(envelope.tag, "the envelope's tag") } : {}),
    }
    const plaintext = await (await connect(values, io)).decrypt(input)
    await writeOutput(
      io,
      values.out,
      values.json ? `${JSON.stringify({ plaintext: b64(plaintext) }, null, 2)}\n` : plaintext,
    )
    return 0
  },
}

export const keyCommands: Record<string, Command<HemctlIo>> = {
  keys: group('hemctl keys', 'create, list, show, change, delete, import, derive and search keys', {
    create,
    list,
    get,
    update,
    delete: remove,
    import: importKey,
    derive,
    search,
  }),
  encrypt,
  decrypt,
}
