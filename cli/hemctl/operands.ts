// What hemctl's key and crypto commands read from their flags: KIDs, base64, a context, the peer of an ECDH.
import { UsageError } from '../index.js'
import type { Peer } from '../../client/index.js'
import { readBytes } from './context.js'

export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
export const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'))

export function kidOf(text: string, what = 'KID'): string {
  if (!/^[0-9a-f]{32}$/.test(text)) throw new UsageError(`${what}: '${text.slice(0, 64)}' is not a KID (32 hex digits)`)
  return text
}

export function required(value: string | undefined, option: string): string {
  if (value === undefined) throw new UsageError(`${option} is needed`)
  return value
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Standard padded base64; `what` names where it came from in the error. */
export function fromBase64(text: string, what: string): Uint8Array {
  if (!BASE64.test(text)) throw new UsageError(`${what} is not base64`)
  return new Uint8Array(Buffer.from(text, 'base64'))
}

export function exclusive(values: Record<string, unknown>, ...options: string[]): void {
  const given = options.filter((option) => values[option] !== undefined)
  if (given.length > 1) throw new UsageError(`give ${given.map((o) => `--${o}`).join(' or ')}, not both`)
}

export const ctxOptions = { ctx: { type: 'string' }, 'ctx-b64': { type: 'string' } } as const

/** `--ctx TEXT` (its UTF-8 bytes) or `--ctx-b64 B64`. */
export function ctxOf(values: { ctx?: string | undefined; 'ctx-b64'?: string | undefined }): Uint8Array | undefined {
  exclusive(values, 'ctx', 'ctx-b64')
  if (values.ctx !== undefined) return utf8(values.ctx)
  return values['ctx-b64'] !== undefined ? fromBase64(values['ctx-b64'], '--ctx-b64') : undefined
}

export const peerOptions = {
  'peer-kid': { type: 'string' },
  'pubkey-b64': { type: 'string' },
  'pubkey-file': { type: 'string' },
} as const

export const PEER_USAGE = `  --peer-kid KID     the peer: a public key stored in the device (same curve as --kid)
  --pubkey-b64 B64   the peer's public key, base64 (raw X25519/X448, SEC1 for the SECP curves)
  --pubkey-file FILE the peer's public key, its raw bytes`

type PeerValues = { [K in keyof typeof peerOptions]?: string | undefined }

/** The peer of an ECDH mode, from at most one of the peer flags; `needed` when the command has no other mode. */
export async function peerOf(values: PeerValues, needed: boolean): Promise<Peer> {
  exclusive(values, 'peer-kid', 'pubkey-b64', 'pubkey-file')
  const { 'peer-kid': extKid, 'pubkey-b64': encoded, 'pubkey-file': file } = values
  if (extKid !== undefined) return { extKid: kidOf(extKid, '--peer-kid') }
  if (encoded !== undefined) return { pubkey: fromBase64(encoded, '--pubkey-b64') }
  if (file !== undefined) return { pubkey: await readBytes(file) }
  if (needed) throw new UsageError('the peer is needed: give --peer-kid, --pubkey-b64 or --pubkey-file')
  return {}
}
