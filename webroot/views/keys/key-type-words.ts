// A key's type in words: the one table from which every screen names an algorithm and reads the
// flags of a listed `type` (crypto-contract §1: `ATT,PKEY,ECDH,ExDSA,SECP256R1`, `PQC,MLKEM768`, or
// get's `ATT,AES256` and bare `ED25519`), so that no raw type string reaches the page.
import { isKeyType, keyTypes, type KeyKind, type KeyType } from '../../../protocol/browser.js'

/** Each algorithm's name as its standard writes it. */
const NAMES: Record<KeyType, string> = {
  AES128: 'AES-128',
  AES192: 'AES-192',
  AES256: 'AES-256',
  'SHA2-256': 'HMAC-SHA-256',
  'SHA2-384': 'HMAC-SHA-384',
  'SHA2-512': 'HMAC-SHA-512',
  'SHA3-256': 'HMAC-SHA3-256',
  'SHA3-384': 'HMAC-SHA3-384',
  'SHA3-512': 'HMAC-SHA3-512',
  CURVE25519: 'X25519',
  CURVE448: 'X448',
  ED25519: 'Ed25519',
  ED448: 'Ed448',
  SECP256R1: 'NIST P-256',
  SECP384R1: 'NIST P-384',
  SECP521R1: 'NIST P-521',
  SECP256K1: 'secp256k1',
  MLKEM512: 'ML-KEM-512',
  MLKEM768: 'ML-KEM-768',
  MLKEM1024: 'ML-KEM-1024',
  MLDSA44: 'ML-DSA-44',
  MLDSA65: 'ML-DSA-65',
  MLDSA87: 'ML-DSA-87',
}

/** What a key of each kind is for, when its flags do not say more. */
const KIND_USES: Record<KeyKind, string> = {
  aes: 'encryption and key wrap',
  hmac: 'HMAC',
  ecdh: 'key agreement (ECDH)',
  eddsa: 'EdDSA signatures',
  ec: 'key agreement (ECDH)',
  mlkem: 'post-quantum key encapsulation',
  mldsa: 'post-quantum signatures',
}

/** What each kind's keys are, for a filter or a group of types. */
export const KIND_WORDS: Record<KeyKind, string> = {
  aes: 'AES secret keys',
  hmac: 'HMAC secret keys',
  ecdh: 'X25519 and X448 (key agreement)',
  eddsa: 'Ed25519 and Ed448 (signatures)',
  ec: 'NIST and secp256k1 curves',
  mlkem: 'ML-KEM (post-quantum)',
  mldsa: 'ML-DSA (post-quantum)',
}

export interface TypeWords {
  /** The algorithm as the device names it, when it is one of the 23. */
  readonly type: KeyType | undefined
  /** "AES-256", "NIST P-256"; an unknown algorithm as the device sent it, marked so. */
  readonly name: string
  /** "secret key", "private key", "public key only"; empty when the type does not say (get's asymmetric type). */
  readonly holds: string
  /** "encryption and key wrap", "key agreement (ECDH) and ECDSA signatures". */
  readonly use: string
  /** "made in this device" (ATT), "imported", or empty when the type does not say. */
  readonly origin: string
  /** All of it in one line: "AES-256 secret key, for encryption and key wrap, made in this device". */
  readonly line: string
}

/** The name of an algorithm the device takes (a form's options, a message). */
export function typeName(type: KeyType): string {
  return NAMES[type]
}

function use(type: KeyType | undefined, flags: readonly string[]): string {
  if (!type) return ''
  const { kind } = keyTypes[type]
  if (kind !== 'ec') return KIND_USES[kind]
  const uses = [flags.includes('ECDH') ? 'key agreement (ECDH)' : '', flags.includes('ExDSA') ? 'ECDSA signatures' : '']
  return uses.filter(Boolean).join(' and ') || KIND_USES.ec
}

/**
 * A `type` as the list (flags, then the algorithm) or get (`ATT,` and a symmetric algorithm, or a
 * bare asymmetric one) gives it, in words.
 */
export function typeWords(listed: string): TypeWords {
  const tokens = listed.split(',').map((token) => token.trim())
  const algorithm = tokens.at(-1) ?? ''
  const type = isKeyType(algorithm) ? algorithm : undefined
  const flags = tokens.slice(0, -1)
  const listedForm = flags.length > 0
  const symmetric = type !== undefined && !('publicKey' in keyTypes[type])
  const secret = flags.includes('PKEY') || (symmetric && flags.includes('ATT'))
  const holds = !type ? '' : secret ? (symmetric ? 'secret key' : 'private key') : listedForm ? 'public key only' : ''
  const origin = flags.includes('ATT') ? 'made in this device' : listedForm ? 'imported' : ''
  const name = type ? NAMES[type] : `an algorithm this app does not know (${algorithm})`
  const uses = use(type, flags)
  const line = [[name, holds].filter(Boolean).join(' '), uses && `for ${uses}`, origin].filter(Boolean).join(', ')
  return { type, name, holds, use: uses, origin, line }
}
