import { createHash } from 'node:crypto'

/** The key types of the device family (device-contract §3), with what each can do. */
export const keyTypes = {
  AES128: { kind: 'aes', bytes: 16 },
  AES192: { kind: 'aes', bytes: 24 },
  AES256: { kind: 'aes', bytes: 32 },
  CURVE25519: { kind: 'ecdh', curve: 'CURVE25519' },
  CURVE448: { kind: 'ecdh', curve: 'CURVE448' },
  ED25519: { kind: 'eddsa' },
  ED448: { kind: 'eddsa' },
  SECP256R1: { kind: 'ec', curve: 'SECP256R1' },
  SECP384R1: { kind: 'ec', curve: 'SECP384R1' },
  SECP521R1: { kind: 'ec', curve: 'SECP521R1' },
  SECP256K1: { kind: 'ec', curve: 'SECP256K1' },
  'SHA2-256': { kind: 'hmac', bytes: 32 },
  'SHA2-384': { kind: 'hmac', bytes: 48 },
  'SHA2-512': { kind: 'hmac', bytes: 64 },
} as const satisfies Record<string, { kind: 'aes' | 'ecdh' | 'eddsa' | 'ec' | 'hmac'; bytes?: number; curve?: string }>

export type KeyType = keyof typeof keyTypes

/** `mode` of the NIST and k1 curves: what the key may be used for. */
export type KeyMode = 'ECDH' | 'ExDSA' | 'ECDH,ExDSA'

export function isKeyType(value: unknown): value is KeyType {
  return typeof value === 'string' && Object.hasOwn(keyTypes, value)
}

/** `mode` as the contract allows it: only for the NIST/k1 curves, ECDH by default. */
export function keyMode(type: KeyType, mode: unknown): KeyMode | undefined {
  if (keyTypes[type].kind !== 'ec') return mode === undefined ? undefined : invalid()
  if (mode === undefined) return 'ECDH'
  if (mode === 'ECDH' || mode === 'ExDSA' || mode === 'ECDH,ExDSA') return mode
  return invalid()
}

function invalid(): never {
  throw new KeyAttributeError('`mode` must be ECDH, ExDSA or ECDH,ExDSA, and only for SECP* keys')
}

/** Whether a key of this type (and mode) can take part in an ECDH. */
export function canAgree(type: KeyType, mode: KeyMode | undefined): boolean {
  const { kind } = keyTypes[type]
  return kind === 'ecdh' || (kind === 'ec' && mode !== 'ExDSA')
}

/**
 * The `type` a key list shows: flags, then the usage, then the algorithm, e.g.
 * `ATT,PKEY,ECDH,CURVE25519` or `ATT,PKEY,AES256`. PKEY marks a key with private material
 * (generated on the device), as opposed to an imported public key.
 */
export function listedType(type: KeyType, mode: KeyMode | undefined, hasPrivate: boolean): string {
  const { kind } = keyTypes[type]
  const usage = kind === 'ecdh' ? 'ECDH' : kind === 'eddsa' ? 'ExDSA' : kind === 'ec' ? mode : undefined
  return ['ATT', ...(hasPrivate ? ['PKEY'] : []), ...(usage ? [usage] : []), type].join(',')
}

/** KID of an imported public key: the first 16 bytes of SHA-1 of the raw key, as 32 lowercase hex. */
export function importedKid(rawPublicKey: Uint8Array): string {
  return createHash('sha1').update(rawPublicKey).digest('hex').slice(0, 32)
}

const KID = /^[0-9a-fA-F]{32}$/

/** A KID as the API accepts it (any case) in the form the device emits (lower case); undefined when malformed. */
export function normaliseKid(value: unknown): string | undefined {
  return typeof value === 'string' && KID.test(value) ? value.toLowerCase() : undefined
}

/** A key's label: 1–32 printable ASCII characters. */
export function checkLabel(value: unknown): string {
  if (typeof value !== 'string' || !/^[\x20-\x7e]{1,32}$/.test(value)) {
    throw new KeyAttributeError('`label` must be 1 to 32 printable ASCII characters')
  }
  return value
}

/** A key's description: base64 of at most 64 bytes; stored as the bytes. */
export function checkDescr(value: unknown, decode: (text: string) => Uint8Array | undefined): Uint8Array {
  const bytes = typeof value === 'string' ? decode(value) : undefined
  if (!bytes || bytes.length > 64) throw new KeyAttributeError('`descr` must be base64 of at most 64 bytes')
  return bytes
}

/** A key attribute the API refuses (400). */
export class KeyAttributeError extends Error {
  override readonly name = 'KeyAttributeError'
}
