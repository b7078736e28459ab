/** The digests of HMAC keys and of the ECDH modes' `alg` (crypto-contract §1, §4). */
export const digests = {
  'SHA2-256': { bytes: 32 },
  'SHA2-384': { bytes: 48 },
  'SHA2-512': { bytes: 64 },
  'SHA3-256': { bytes: 32 },
  'SHA3-384': { bytes: 48 },
  'SHA3-512': { bytes: 64 },
} as const

export type Digest = keyof typeof digests

export function isDigest(value: unknown): value is Digest {
  return typeof value === 'string' && Object.hasOwn(digests, value)
}

/**
 * The 23 key types of the device family (crypto-contract §1) and what each is. `bytes` is the
 * secret of a symmetric key; `publicKey` the bytes `get` shows; `derived` the bytes a derive
 * makes of the shared secret (absent: not derivable).
 */
export const keyTypes = {
  AES128: { kind: 'aes', bytes: 16, derived: 16 },
  AES192: { kind: 'aes', bytes: 24, derived: 24 },
  AES256: { kind: 'aes', bytes: 32, derived: 32 },
  'SHA2-256': { kind: 'hmac', bytes: 32, digest: 'SHA2-256', derived: 32 },
  'SHA2-384': { kind: 'hmac', bytes: 48, digest: 'SHA2-384', derived: 48 },
  'SHA2-512': { kind: 'hmac', bytes: 64, digest: 'SHA2-512', derived: 64 },
  'SHA3-256': { kind: 'hmac', bytes: 32, digest: 'SHA3-256', derived: 32 },
  'SHA3-384': { kind: 'hmac', bytes: 48, digest: 'SHA3-384', derived: 48 },
  'SHA3-512': { kind: 'hmac', bytes: 64, digest: 'SHA3-512', derived: 64 },
  CURVE25519: { kind: 'ecdh', curve: 'CURVE25519', publicKey: 32, derived: 32 },
  CURVE448: { kind: 'ecdh', curve: 'CURVE448', publicKey: 56, derived: 56 },
  ED25519: { kind: 'eddsa', curve: 'ED25519', publicKey: 32, derived: 32 },
  ED448: { kind: 'eddsa', curve: 'ED448', publicKey: 57, derived: 57 },
  SECP256R1: { kind: 'ec', curve: 'SECP256R1', publicKey: 33, derived: 32 },
  SECP384R1: { kind: 'ec', curve: 'SECP384R1', publicKey: 49, derived: 48 },
  SECP521R1: { kind: 'ec', curve: 'SECP521R1', publicKey: 67, derived: 66 },
  SECP256K1: { kind: 'ec', curve: 'SECP256K1', publicKey: 33, derived: 32 },
  // The private part of a post-quantum key is its seed (FIPS 203 d‖z, FIPS 204 ξ), expanded on use.
  MLKEM512: { kind: 'mlkem', publicKey: 800, seed: 64, ciphertext: 768 },
  MLKEM768: { kind: 'mlkem', publicKey: 1184, seed: 64, ciphertext: 1088 },
  MLKEM1024: { kind: 'mlkem', publicKey: 1568, seed: 64, ciphertext: 1568 },
  MLDSA44: { kind: 'mldsa', publicKey: 1312, seed: 32, signature: 2420 },
  MLDSA65: { kind: 'mldsa', publicKey: 1952, seed: 32, signature: 3309 },
  MLDSA87: { kind: 'mldsa', publicKey: 2592, seed: 32, signature: 4627 },
} as const satisfies Record<string, KeyTypeInfo>

/**
 * The low byte of the type word the family's authenticator app reads in a key hint (ext-auth contract §1.4, [A] v1
 * `base.js`), read as hex digits like the word it goes in: what the app does not know (post-quantum) is 0.
 */
const appTypeCodes: Record<KeyType, number> = {
  AES128: 0x30,
  AES192: 0x31,
  AES256: 0x32,
  'SHA2-256': 0x10,
  'SHA2-384': 0x11,
  'SHA2-512': 0x12,
  'SHA3-256': 0x13,
  'SHA3-384': 0x14,
  'SHA3-512': 0x15,
  CURVE25519: 0x20,
  CURVE448: 0x21,
  ED25519: 0x22,
  ED448: 0x23,
  SECP256R1: 0x10,
  SECP384R1: 0x11,
  SECP521R1: 0x12,
  SECP256K1: 0x13,
  MLKEM512: 0,
  MLKEM768: 0,
  MLKEM1024: 0,
  MLDSA44: 0,
  MLDSA65: 0,
  MLDSA87: 0,
}

/**
 * The app's 16-bit type word of a stored key: 0x8000 asymmetric, 0x4000 made on the device (what a list shows as
 * `ATT`), 0x2000 private key, 0x1000 public key only, 0x0800 ECDH, 0x0400 ExDSA; the low byte names the algorithm.
 */
export function appTypeWord(type: KeyType, mode: KeyMode | undefined, hasPrivate: boolean): number {
  const code = appTypeCodes[type]
  if (!isAsymmetric(type)) return 0x4000 | code
  const usage = (canAgree(type, mode) ? 0x0800 : 0) | (canSign(type, mode) ? 0x0400 : 0)
  return 0x8000 | (hasPrivate ? 0x4000 | 0x2000 : 0x1000) | usage | code
}

interface KeyTypeInfo {
  kind: KeyKind
  bytes?: number
  digest?: Digest
  curve?: string
  publicKey?: number
  seed?: number
  ciphertext?: number
  signature?: number
  derived?: number
}

export type KeyKind = 'aes' | 'hmac' | 'ecdh' | 'eddsa' | 'ec' | 'mlkem' | 'mldsa'
export type KeyType = keyof typeof keyTypes
export type KeyTypeOf<K extends KeyKind> = {
  [T in KeyType]: (typeof keyTypes)[T]['kind'] extends K ? T : never
}[KeyType]

/** `mode` of the NIST and k1 curves: what the key may be used for. */
export type KeyMode = 'ECDH' | 'ExDSA' | 'ECDH,ExDSA'

export function isKeyType(value: unknown): value is KeyType {
  return typeof value === 'string' && Object.hasOwn(keyTypes, value)
}

export function isKind<K extends KeyKind>(type: KeyType, kind: K): type is KeyTypeOf<K> {
  return keyTypes[type].kind === kind
}

/** Whether the type holds a public key (asymmetric): its KID is then the SHA-1 of that key. */
export function isAsymmetric(type: KeyType): boolean {
  return 'publicKey' in keyTypes[type]
}

/**
 * `mode` as crypto-contract §1 reads it: honoured only for SECP types, where it is a
 * comma-separated set of the flags `ECDH` and `ExDSA` in either order, and a string without
 * either flag (the JS SDK sends the type name) counts as absent, which means ECDH. Every other
 * type ignores it, whatever it says. JSON null is absent; only a SECP `mode` that is not a string
 * is refused (400).
 */
export function keyMode(type: KeyType, mode: unknown): KeyMode | undefined {
  if (keyTypes[type].kind !== 'ec') return undefined
  if (mode === undefined || mode === null) return 'ECDH'
  if (typeof mode !== 'string') throw new KeyAttributeError('`mode` must be a string such as ECDH, ExDSA or ECDH,ExDSA')
  const flags = new Set(mode.split(',').map((flag) => flag.trim()))
  const ecdh = flags.has('ECDH')
  const exdsa = flags.has('ExDSA')
  if (ecdh && exdsa) return 'ECDH,ExDSA'
  return exdsa ? 'ExDSA' : 'ECDH'
}

/** Whether a key of this type (and mode) can take part in an ECDH. */
export function canAgree(type: KeyType, mode: KeyMode | undefined): boolean {
  const { kind } = keyTypes[type]
  return kind === 'ecdh' || (kind === 'ec' && mode !== 'ExDSA')
}

/** Whether a key of this type (and mode) can make or check ECDSA or EdDSA signatures. */
export function canSign(type: KeyType, mode: KeyMode | undefined): boolean {
  const { kind } = keyTypes[type]
  return kind === 'eddsa' || (kind === 'ec' && mode !== undefined && mode !== 'ECDH')
}

function usageFlags(type: KeyType, mode: KeyMode | undefined): string[] {
  switch (keyTypes[type].kind) {
    case 'ecdh':
      return ['ECDH']
    case 'eddsa':
      return ['ExDSA']
    case 'ec':
      return [mode ?? 'ECDH']
    case 'mlkem':
    case 'mldsa':
      return ['PQC']
    default:
      return []
  }
}

/**
 * The `type` a key list shows (crypto-contract §1): `ATT,PKEY` for a key made on the device
 * (created or derived), then its usage flags, then the algorithm, e.g. `ATT,PKEY,ECDH,CURVE25519`
 * or `ATT,PKEY,AES256`; an imported public key has neither `ATT` nor `PKEY` (`PQC,MLKEM768`).
 */
export function listedType(type: KeyType, mode: KeyMode | undefined, hasPrivate: boolean): string {
  return [...(hasPrivate ? ['ATT', 'PKEY'] : []), ...usageFlags(type, mode), type].join(',')
}

/** The `type` of `get`: the bare algorithm of an asymmetric key, `ATT,<alg>` of a symmetric one. */
export function gotType(type: KeyType): string {
  return isAsymmetric(type) ? type : `ATT,${type}`
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
