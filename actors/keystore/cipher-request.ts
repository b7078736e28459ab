import { base64Field, normaliseKid } from '../../protocol/index.js'

export type CipherMode = 'ECB' | 'CBC' | 'GCM'

export interface CipherAlg {
  name: string
  keyBytes: 16 | 24 | 32
  mode: CipherMode
}

/** The nine `alg` values of the seed (§2.8). */
export const cipherAlgs: Readonly<Record<string, CipherAlg>> = Object.fromEntries(
  ([16, 24, 32] as const).flatMap((keyBytes) =>
    (['ECB', 'CBC', 'GCM'] as const).map((mode) => {
      const name = `AES${keyBytes * 8}-${mode}`
      return [name, { name, keyBytes, mode }]
    }),
  ),
)

export const LIMITS = { plaintext: 2048, ciphertext: 2064, ctx: 64, aad: 64, iv: 16, tag: 16 } as const

export type Direction = 'encrypt' | 'decrypt'

export interface CipherRequest {
  alg: CipherAlg
  kid: string
  /** The peer of an indirect ECDH: a stored public key, or one given in the request. */
  peer?: { extKid: string } | { publicKey: Uint8Array }
  /** Plaintext to encrypt, or ciphertext to decrypt. */
  msg: Uint8Array
  ctx: Uint8Array
  aad?: Uint8Array
  iv?: Uint8Array
  tag?: Uint8Array
}

/** A request the device refuses as malformed (400); the message names the field, never its value. */
export class CipherRequestError extends Error {
  override readonly name = 'CipherRequestError'
  constructor(
    message: string,
    /** The request's KID when it was readable, for the journal entry. */
    readonly kid?: string,
  ) {
    super(message)
  }
}

/** Parses and checks an encrypt or decrypt body as received (device contract §5). */
export function parseCipherRequest(raw: string, direction: Direction): CipherRequest {
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch {
    throw new CipherRequestError('The body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new CipherRequestError('The body must be a JSON object')
  const fields = body as Record<string, unknown>
  const kid = normaliseKid(fields.kid)
  if (!kid) throw new CipherRequestError('`kid` must be 32 hex characters')
  const bad = (message: string) => new CipherRequestError(message, kid)

  const alg = typeof fields.alg === 'string' ? cipherAlgs[fields.alg] : undefined
  if (!alg) throw bad(`\`alg\` must be one of ${Object.keys(cipherAlgs).join(', ')}`)
  const bytes = (name: string, max: number, required = false): Uint8Array | undefined => {
    const value = fields[name]
    if (value === undefined || value === null) {
      if (required) throw bad(`\`${name}\` is required`)
      return undefined
    }
    const decoded = base64Field(value)
    if (!decoded) throw bad(`\`${name}\` must be base64`)
    if (decoded.length > max) throw bad(`\`${name}\` must be at most ${max} bytes`)
    return decoded
  }

  const msg = bytes('msg', direction === 'encrypt' ? LIMITS.plaintext : LIMITS.ciphertext, true)!
  const ctx = bytes('ctx', LIMITS.ctx) ?? new Uint8Array(0)
  const aad = bytes('aad', LIMITS.aad)
  if (aad && alg.mode !== 'GCM') throw bad('`aad` is for the GCM algorithms only')
  if (alg.mode === 'ECB' && msg.length % 16 !== 0)
    throw bad('ECB takes whole 16-byte blocks: `msg` must be a multiple of 16 bytes')

  const request: CipherRequest = { alg, kid, msg, ctx, ...(aad ? { aad } : {}) }
  const peer = parsePeer(fields, bad)
  if (peer) request.peer = peer
  if (direction === 'decrypt' && alg.mode !== 'ECB') {
    request.iv = exactly(bytes('iv', LIMITS.iv, true)!, LIMITS.iv, 'iv', bad)
    if (alg.mode === 'CBC' && (msg.length === 0 || msg.length % 16 !== 0))
      throw bad('CBC ciphertext must be a non-zero multiple of 16 bytes')
    if (alg.mode === 'GCM') request.tag = exactly(bytes('tag', LIMITS.tag, true)!, LIMITS.tag, 'tag', bad)
  }
  return request
}

function parsePeer(
  fields: Record<string, unknown>,
  bad: (message: string) => CipherRequestError,
): CipherRequest['peer'] {
  const hasExt = fields.ext_kid !== undefined && fields.ext_kid !== null
  const hasPub = fields.pubkey !== undefined && fields.pubkey !== null
  if (hasExt && hasPub) throw bad('Give either `ext_kid` or `pubkey`, not both')
  if (hasExt) {
    const extKid = normaliseKid(fields.ext_kid)
    if (!extKid) throw bad('`ext_kid` must be 32 hex characters')
    return { extKid }
  }
  if (hasPub) {
    const publicKey = base64Field(fields.pubkey)
    if (!publicKey || publicKey.length === 0 || publicKey.length > 133)
      throw bad('`pubkey` must be base64 of a public key')
    return { publicKey }
  }
  return undefined
}

function exactly(
  value: Uint8Array,
  length: number,
  name: string,
  bad: (message: string) => CipherRequestError,
): Uint8Array {
  if (value.length !== length) throw bad(`\`${name}\` must be ${length} bytes`)
  return value
}
