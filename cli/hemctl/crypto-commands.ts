// hemctl's commands on the keys' other uses: signatures, MACs, ECDH, key wrap and ML-KEM. Messages
// are read raw; signatures, MACs, wrapped keys, KEM ciphertexts and secrets are raw bytes, or
// base64 text with --base64, whichever way they go.
import { parseOptions, UsageError, type Command } from '../index.js'
import { type HemClient, SIGN_ALGS, WRAP_ALGS, type WrapAlg } from '../../client/index.js'
import { type Digest, digests, isDigest } from '../../protocol/index.js'
import { connect, connectionOptions, print, readBytes, usageText, type HemctlIo } from './context.js'
import { decodeData, encodeData, readInput, writeOutput } from './data-io.js'
import { CommandFailure } from './failure.js'
import { group } from './group.js'
import {
  DEFAULT_SCHEMES,
  defaultScheme,
  ECDH_KEYS,
  MLDSA,
  type Scheme,
  SIGNING_KEYS,
  wrapped,
} from './key-type-help.js'
import {
  b64,
  ctxOf,
  ctxOptions,
  exclusive,
  fromBase64,
  kidOf,
  PEER_USAGE,
  peerOf,
  peerOptions,
  required,
} from './operands.js'

const kidOption = { kid: { type: 'string' } } as const
const inOption = { in: { type: 'string' } } as const
const outOptions = { out: { type: 'string' }, base64: { type: 'boolean', default: false } } as const
const dataOptions = { ...kidOption, ...inOption, ...outOptions } as const

const IN_USAGE = '  --in FILE          the message, raw bytes (default stdin; the device takes 1 to 2048)'
const OUT_USAGE = '  --out FILE         where to write the result (default stdout)'
const BASE64_USAGE = '  --base64           write the result as one line of base64 instead of raw bytes'
const CTX_USAGE = `  --ctx TEXT         the context: TEXT's UTF-8 bytes
  --ctx-b64 B64      the context given as base64`
const DIGEST_USAGE = Object.keys(digests).join(', ')

interface DataValues {
  kid?: string | undefined
  in?: string | undefined
  out?: string | undefined
  base64?: boolean | undefined
  json?: boolean | undefined
}

const kidValue = (values: DataValues) => kidOf(required(values.kid, '--kid'), '--kid')

/** The result: JSON (base64 fields) with --json, else the bytes, raw or base64. */
async function emit(
  io: HemctlIo,
  values: DataValues,
  result: Uint8Array,
  json: Record<string, unknown>,
): Promise<void> {
  const data = values.json ? `${JSON.stringify(json, null, 2)}\n` : encodeData(result, values.base64)
  await writeOutput(io, values.out, data)
}

/** A verify's outcome: `valid`, exit 0; else the reason on stderr, exit 1 (with --json, `{"valid"}` either way). */
function verdict(io: HemctlIo, values: DataValues, valid: boolean, failure: string): number {
  if (values.json || valid) print(io, values.json, { valid }, 'valid\n')
  if (!valid) throw new CommandFailure(failure)
  return 0
}

/** The bytes of a signature or MAC to check: a file (raw, or base64 with --base64) or a base64 flag. */
async function expected(
  values: DataValues & Record<string, unknown>,
  fileOption: string,
  b64Option: string,
): Promise<Uint8Array> {
  exclusive(values, fileOption, b64Option)
  const file = values[fileOption] as string | undefined
  const encoded = values[b64Option] as string | undefined
  if (file !== undefined) return decodeData(await readBytes(file), values.base64, file)
  return fromBase64(required(encoded, `--${fileOption} or --${b64Option}`), `--${b64Option}`)
}

// ---- signatures ----

function schemeOption(alg: string | undefined): Scheme | undefined {
  if (alg === undefined) return undefined
  const known: readonly string[] = [...SIGN_ALGS, MLDSA]
  if (!known.includes(alg)) throw new UsageError(`--alg: '${alg.slice(0, 32)}' is not one of ${known.join(', ')}`)
  return alg as Scheme
}

/** --alg, else the key's type says (read with the key's own scope, the one signing needs anyway). */
async function schemeOf(client: HemClient, kid: string, given: Scheme | undefined): Promise<Scheme> {
  if (given !== undefined) return given
  const type = (await client.getKey(kid, { use: true })).type.split(',').at(-1) ?? ''
  const scheme = defaultScheme(type)
  if (scheme === undefined)
    throw new CommandFailure(`${kid} is a ${type.slice(0, 16)} key, which does not sign (ECDSA, EdDSA, ML-DSA do)`)
  return scheme
}

const signOptions = { ...connectionOptions, ...kidOption, ...inOption, ...ctxOptions, alg: { type: 'string' } } as const

const SIGN_USAGE = `  --kid KID          ${wrapped(`the key: ${SIGNING_KEYS}`)}
  --alg ALG          ${wrapped(`${SIGN_ALGS.join(', ')} or ${MLDSA}; default from the key's type: ${DEFAULT_SCHEMES}`)}
${CTX_USAGE} (at most 255 bytes; Ed25519ctx needs one,
                     Ed25519 and ECDSA ignore it)`

const sign: Command<HemctlIo> = {
  summary: 'sign a file or stdin (ECDSA, EdDSA, ML-DSA)',
  usage: usageText(
    'sign --kid KID [--alg ALG] [--ctx TEXT | --ctx-b64 B64] [--in FILE] [--out FILE] [--base64] ' +
      '[CONNECTION OPTIONS]',
    `Signs the bytes of FILE or stdin with a key of the device (POST /api/crypto/exdsa/sign, or
/api/crypto/pqc/mldsa/sign for ML-DSA; scope keymgmt:use:KID) and writes the signature: DER for
ECDSA, raw for EdDSA (64 or 114 bytes) and ML-DSA. With --json: {"kid", "alg", "signature"}.`,
    `${SIGN_USAGE}\n${IN_USAGE}\n${OUT_USAGE}\n${BASE64_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: { ...signOptions, ...outOptions } })
    const kid = kidValue(values)
    const given = schemeOption(values.alg)
    const ctx = ctxOf(values)
    const msg = await readInput(io, values.in)
    const client = await connect(values, io)
    const scheme = await schemeOf(client, kid, given)
    const { alg, signature } =
      scheme === MLDSA
        ? await client.mlDsaSign({ kid, msg, ...(ctx ? { ctx } : {}) })
        : { alg: scheme, signature: await client.sign({ kid, msg, alg: scheme, ...(ctx ? { ctx } : {}) }) }
    await emit(io, values, signature, { kid, alg, signature: b64(signature) })
    return 0
  },
}

const verify: Command<HemctlIo> = {
  summary: 'check a signature of a file or stdin; exit 1 when it does not verify',
  usage: usageText(
    'verify --kid KID [--alg ALG] [--ctx TEXT | --ctx-b64 B64] (--sig FILE | --sig-b64 B64) [--in FILE] ' +
      '[--base64] [CONNECTION OPTIONS]',
    `Checks a signature of the bytes of FILE or stdin (POST /api/crypto/exdsa/verify, or
/api/crypto/pqc/mldsa/verify; scope keymgmt:use:KID) with a key of the device, an imported
public key too. Prints "valid" (with --json {"valid": true}) and exits 0, or says that it does
not verify and exits 1.`,
    `${SIGN_USAGE}
  --sig FILE         the signature, raw bytes (base64 text with --base64)
  --sig-b64 B64      the signature given as base64
  --base64           the --sig FILE holds base64 text
${IN_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: {
        ...signOptions,
        sig: { type: 'string' },
        'sig-b64': { type: 'string' },
        base64: { type: 'boolean', default: false },
      },
    })
    const kid = kidValue(values)
    const given = schemeOption(values.alg)
    const ctx = ctxOf(values)
    const signature = await expected(values, 'sig', 'sig-b64')
    const msg = await readInput(io, values.in)
    const client = await connect(values, io)
    const scheme = await schemeOf(client, kid, given)
    const input = { kid, msg, signature, ...(ctx ? { ctx } : {}) }
    const valid =
      scheme === MLDSA ? await client.mlDsaVerify(input) : await client.verifySignature({ ...input, alg: scheme })
    return verdict(io, values, valid, 'the signature does not verify')
  },
}

// ---- HMAC and ECDH ----

const hmac: Command<HemctlIo> = {
  summary: 'the HMAC of a file or stdin, or check one (--mac); exit 1 when it does not match',
  usage: usageText(
    'hmac --kid KID [--alg DIGEST] [--peer-kid KID | --pubkey-b64 B64 | --pubkey-file FILE] ' +
      '[--mac FILE | --mac-b64 B64] [--in FILE] [--out FILE] [--base64] [CONNECTION OPTIONS]',
    `Writes the HMAC of the bytes of FILE or stdin (POST /api/crypto/hmac/hash, scope
keymgmt:use:KID). With an HMAC key (SHA2-*, SHA3-*) the key's type is the digest; with an ECDH
key and a peer the HMAC key is their raw shared secret and --alg is needed. With --mac or
--mac-b64 it checks that MAC instead (POST /api/crypto/hmac/verify): "valid" and exit 0, or exit 1.
With --json: {"kid", "mac"} or {"valid"}.`,
    `  --kid KID          an HMAC key, or an ECDH key with a peer
  --alg DIGEST       ${DIGEST_USAGE} (ECDH mode)
${PEER_USAGE}
  --mac FILE         check this MAC: raw bytes (base64 text with --base64)
  --mac-b64 B64      check this MAC, given as base64
${IN_USAGE}\n${OUT_USAGE}\n${BASE64_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: {
        ...connectionOptions,
        ...dataOptions,
        ...peerOptions,
        alg: { type: 'string' },
        mac: { type: 'string' },
        'mac-b64': { type: 'string' },
      },
    })
    const kid = kidValue(values)
    const peer = await peerOf(values, false)
    const checking = values.mac !== undefined || values['mac-b64'] !== undefined
    const mac = checking ? await expected(values, 'mac', 'mac-b64') : undefined
    const input = { kid, msg: await readInput(io, values.in), ...peer, ...digestOf(values.alg) }
    const client = await connect(values, io)
    if (mac) return verdict(io, values, await client.hmacVerify({ ...input, mac }), 'the MAC does not match')
    const result = await client.hmac(input)
    await emit(io, values, result, { kid, mac: b64(result) })
    return 0
  },
}

function digestOf(alg: string | undefined): { alg?: Digest } {
  if (alg === undefined) return {}
  if (!isDigest(alg)) throw new UsageError(`--alg: '${alg.slice(0, 32)}' is not one of ${DIGEST_USAGE}`)
  return { alg }
}

const ecdh: Command<HemctlIo> = {
  summary: 'the shared secret of a key and a peer',
  usage: usageText(
    'ecdh --kid KID (--peer-kid KID | --pubkey-b64 B64 | --pubkey-file FILE) [--alg DIGEST] [--out FILE] ' +
      '[--base64] [CONNECTION OPTIONS]',
    `Writes the ECDH secret of a key of the device and a peer on the same curve (POST
/api/crypto/ecdh, scope keymgmt:use:KID): its first 32 bytes, or with --alg that digest of the
whole secret. It is a secret: mind where it goes. With --json: {"kid", "ecdh"}.`,
    `  --kid KID          ${ECDH_KEYS}
${PEER_USAGE}
  --alg DIGEST       ${DIGEST_USAGE}\n${OUT_USAGE}\n${BASE64_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: { ...connectionOptions, ...kidOption, ...outOptions, ...peerOptions, alg: { type: 'string' } },
    })
    const kid = kidValue(values)
    const input = { kid, ...(await peerOf(values, true)), ...digestOf(values.alg) }
    const secret = await (await connect(values, io)).ecdh(input)
    await emit(io, values, secret, { kid, ecdh: b64(secret) })
    return 0
  },
}

// ---- key wrap ----

const wrapOptions = {
  ...connectionOptions,
  ...dataOptions,
  ...peerOptions,
  ...ctxOptions,
  alg: { type: 'string' },
  iv: { type: 'string' },
} as const

type WrapValues = DataValues & {
  alg?: string | undefined
  iv?: string | undefined
  ctx?: string | undefined
  'ctx-b64'?: string | undefined
} & Parameters<typeof peerOf>[0]

const WRAP_SYNOPSIS =
  '--kid KID [--alg AES128|AES192|AES256] [--peer-kid KID | --pubkey-b64 B64 | --pubkey-file FILE] ' +
  '[--ctx TEXT | --ctx-b64 B64] [--iv HEX] [--in FILE] [--out FILE] [--base64] [CONNECTION OPTIONS]'

const WRAP_USAGE = `  --kid KID          an AES key (the KEK, cut to --alg's width), or an ECDH key with a peer
                     (the KEK is HKDF-SHA256 of the secret, info "encedo-kek" + the context)
  --alg ALG          the KEK's width: AES128, AES192 or AES256 (default)
${PEER_USAGE}
${CTX_USAGE} (ECDH mode, at most 64 bytes)
  --iv HEX           RFC 3394's initial value, 16 hex digits (default A6A6A6A6A6A6A6A6)`

async function wrapInput(io: HemctlIo, values: WrapValues, direction: 'wrap' | 'unwrap') {
  const kid = kidValue(values)
  if (values.alg !== undefined && !(WRAP_ALGS as readonly string[]).includes(values.alg))
    throw new UsageError(`--alg: '${values.alg.slice(0, 32)}' is not AES128, AES192 or AES256`)
  if (values.iv !== undefined && !/^[0-9a-fA-F]{16}$/.test(values.iv))
    throw new UsageError('--iv must be 16 hex digits (8 bytes)')
  const ctx = ctxOf(values)
  const peer = await peerOf(values, false)
  const input = await readInput(io, values.in)
  return {
    kid,
    // What wrap reads is a key, raw like a message; what unwrap reads is the wrapped key, raw or base64.
    msg: direction === 'wrap' ? input : decodeData(input, values.base64, 'the input'),
    ...peer,
    ...(values.alg !== undefined ? { alg: values.alg as WrapAlg } : {}),
    ...(ctx ? { ctx } : {}),
    ...(values.iv !== undefined ? { iv: new Uint8Array(Buffer.from(values.iv, 'hex')) } : {}),
  }
}

const wrap: Command<HemctlIo> = {
  summary: 'wrap a key (RFC 3394) read from a file or stdin',
  usage: usageText(
    `wrap ${WRAP_SYNOPSIS}`,
    `Wraps the key held raw in FILE or stdin (16 to 2048 bytes, a multiple of 8) with RFC 3394 AES
key wrap (POST /api/crypto/cipher/wrap, scope keymgmt:use:KID) and writes the wrapped key, 8
bytes longer. With --json: {"kid", "wrapped"}.`,
    `${WRAP_USAGE}
  --in FILE          the key to wrap, raw bytes (default stdin)\n${OUT_USAGE}\n${BASE64_USAGE}`,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: wrapOptions })
    const input = await wrapInput(io, values, 'wrap')
    const wrapped = await (await connect(values, io)).wrap(input)
    await emit(io, values, wrapped, { kid: input.kid, wrapped: b64(wrapped) })
    return 0
  },
}

const unwrap: Command<HemctlIo> = {
  summary: "unwrap a key 'hemctl wrap' wrapped",
  usage: usageText(
    `unwrap ${WRAP_SYNOPSIS}`,
    `Unwraps the wrapped key read from FILE or stdin (POST /api/crypto/cipher/unwrap, scope
keymgmt:use:KID) with the same key, peer, context and IV that wrapped it, and writes the key.
A wrapped key whose integrity check fails is refused (exit 1). With --json: {"kid", "unwrapped"}.`,
    `${WRAP_USAGE}
  --in FILE          the wrapped key, raw bytes or base64 text with --base64 (default stdin)
${OUT_USAGE}
  --base64           read and write base64 text instead of raw bytes`,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: wrapOptions })
    const input = await wrapInput(io, values, 'unwrap')
    const key = await (await connect(values, io)).unwrap(input)
    await emit(io, values, key, { kid: input.kid, unwrapped: b64(key) })
    return 0
  },
}

// ---- ML-KEM ----

const encaps: Command<HemctlIo> = {
  summary: 'a fresh shared secret and its ciphertext for an ML-KEM key',
  usage: usageText(
    'kem encaps --kid KID (--secret-out FILE | --json) [--out FILE] [--base64] [CONNECTION OPTIONS]',
    `Encapsulates to an ML-KEM key of the device, its own or an imported public key (POST
/api/crypto/pqc/mlkem/encaps, scope keymgmt:use:KID): writes the ciphertext (768, 1088 or 1568
bytes) to --out or stdout, for the key's holder, and the 32-byte shared secret to --secret-out.
With --json: {"kid", "alg", "ciphertext", "shared_secret"} to --out or stdout.`,
    `  --kid KID          an MLKEM512, MLKEM768 or MLKEM1024 key
  --secret-out FILE  where to write the shared secret
  --out FILE         where to write the ciphertext (default stdout)
  --base64           write base64 text instead of raw bytes`,
  ),
  async run(args, io) {
    const { values } = parseOptions({
      args,
      options: { ...connectionOptions, ...kidOption, ...outOptions, 'secret-out': { type: 'string' } },
    })
    const kid = kidValue(values)
    if (!values.json && values['secret-out'] === undefined)
      throw new UsageError('--secret-out is needed (or --json, which writes both)')
    const { alg, ciphertext, sharedSecret } = await (await connect(values, io)).mlKemEncapsulate(kid)
    const fields = { kid, alg, ciphertext: b64(ciphertext), shared_secret: b64(sharedSecret) }
    if (values['secret-out'] !== undefined)
      await writeOutput(io, values['secret-out'], encodeData(sharedSecret, values.base64))
    await emit(io, values, ciphertext, fields)
    return 0
  },
}

const decaps: Command<HemctlIo> = {
  summary: 'the shared secret of an ML-KEM ciphertext',
  usage: usageText(
    'kem decaps --kid KID [--in FILE] [--out FILE] [--base64] [CONNECTION OPTIONS]',
    `Decapsulates the ciphertext read from FILE or stdin with the ML-KEM private key KID (POST
/api/crypto/pqc/mlkem/decaps, scope keymgmt:use:KID) and writes the 32-byte shared secret. With
--json: {"kid", "alg", "shared_secret"}.`,
    `  --kid KID          an MLKEM512, MLKEM768 or MLKEM1024 key made in the device
  --in FILE          the ciphertext, raw bytes or base64 text with --base64 (default stdin)
${OUT_USAGE}
  --base64           read and write base64 text instead of raw bytes`,
  ),
  async run(args, io) {
    const { values } = parseOptions({ args, options: { ...connectionOptions, ...dataOptions } })
    const kid = kidValue(values)
    const ciphertext = decodeData(await readInput(io, values.in), values.base64, 'the input')
    const { alg, sharedSecret } = await (await connect(values, io)).mlKemDecapsulate(kid, ciphertext)
    await emit(io, values, sharedSecret, { kid, alg, shared_secret: b64(sharedSecret) })
    return 0
  },
}

export const cryptoCommands: Record<string, Command<HemctlIo>> = {
  sign,
  verify,
  hmac,
  ecdh,
  wrap,
  unwrap,
  kem: group('hemctl kem', 'ML-KEM: encapsulate to a key, decapsulate with it', { encaps, decaps }),
}
