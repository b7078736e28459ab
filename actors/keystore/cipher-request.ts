import { type CryptoRequest, MSG_BYTES, type Peer } from './crypto-request.js'

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

export const LIMITS = { plaintext: MSG_BYTES, ciphertext: MSG_BYTES + 16, ctx: 64, aad: 64, iv: 16, tag: 16 } as const

export type Direction = 'encrypt' | 'decrypt'

export interface CipherRequest {
  alg: CipherAlg
  /** The peer of an indirect ECDH: a stored public key, or one given in the request. */
  peer?: Peer
  /** Plaintext to encrypt, or ciphertext to decrypt. */
  msg: Uint8Array
  ctx: Uint8Array
  aad?: Uint8Array
  iv?: Uint8Array
  tag?: Uint8Array
}

/** Checks the fields of an encrypt or decrypt body (device contract §5). */
export function parseCipherRequest(request: CryptoRequest, direction: Direction): CipherRequest {
  const alg = cipherAlgs[request.choice('alg', Object.keys(cipherAlgs), true)!]!
  const msg = request.msg(direction === 'encrypt' ? LIMITS.plaintext : LIMITS.ciphertext)
  const ctx = request.bytes('ctx', LIMITS.ctx) ?? new Uint8Array(0)
  const aad = request.bytes('aad', LIMITS.aad)
  if (aad && alg.mode !== 'GCM') throw request.bad('`aad` is for the GCM algorithms only')
  if (alg.mode === 'ECB' && msg.length % 16 !== 0)
    throw request.bad('ECB takes whole 16-byte blocks: `msg` must be a multiple of 16 bytes')

  const parsed: CipherRequest = { alg, msg, ctx, ...(aad ? { aad } : {}) }
  const peer = request.peer()
  if (peer) parsed.peer = peer
  if (direction === 'decrypt' && alg.mode !== 'ECB') {
    parsed.iv = request.exactly('iv', LIMITS.iv, true)!
    if (alg.mode === 'CBC' && msg.length % 16 !== 0)
      throw request.bad('CBC ciphertext must be a non-zero multiple of 16 bytes')
    if (alg.mode === 'GCM') parsed.tag = request.exactly('tag', LIMITS.tag, true)!
  }
  return parsed
}
