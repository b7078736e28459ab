// What hemctl's help says of the key types, and the signing scheme a key's type implies, read
// from the tables (protocol's key types, hal's curves): a new type shows up without a line here.
import type { SignAlg } from '../../client/index.js'
import { CURVES, curvesOf, ED_ALGORITHMS, edCurveOf, type EcdsaDigest } from '../../hal/index.js'
import { isKeyType, type KeyKind, keyTypes, type KeyType } from '../../protocol/index.js'

/** ML-DSA's scheme: the variant is the key's. */
export const MLDSA = 'MLDSA'

/** How a key signs: an ECDSA or EdDSA `alg`, or ML-DSA (whose variant is the key's). */
export type Scheme = SignAlg | typeof MLDSA

const ECDSA_ALG: Readonly<Record<EcdsaDigest, SignAlg>> = {
  'SHA2-256': 'SHA256WithECDSA',
  'SHA2-384': 'SHA384WithECDSA',
  'SHA2-512': 'SHA512WithECDSA',
}

/**
 * The scheme a key of `type` signs with when --alg is not given: ECDSA with the curve's digest,
 * the curve's first (pure) EdDSA variant, or ML-DSA; undefined for a type that does not sign.
 */
export function defaultScheme(type: string): Scheme | undefined {
  if (!isKeyType(type)) return undefined
  const info = keyTypes[type]
  if (info.kind === 'ec') return ECDSA_ALG[CURVES[info.curve].digest]
  if (info.kind === 'eddsa') return ED_ALGORITHMS.find((algorithm) => edCurveOf(algorithm) === info.curve)
  return info.kind === 'mldsa' ? MLDSA : undefined
}

const USES: Readonly<Record<KeyKind, string>> = {
  aes: 'ciphers, key wrap',
  hmac: 'HMAC',
  ecdh: 'ECDH',
  eddsa: 'EdDSA',
  ec: 'ECDH, ECDSA',
  mlkem: 'ML-KEM',
  mldsa: 'ML-DSA',
}

const typesOf = (kind: KeyKind) => (Object.keys(keyTypes) as KeyType[]).filter((type) => keyTypes[type].kind === kind)

/** `words` joined with ", " and a last "or". */
const either = (words: readonly string[]) => `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`

/** Text after an option's 21-column lead, wrapped before column 100. */
export function wrapped(text: string): string {
  const lines = ['']
  for (const word of text.split(' ')) {
    const line = lines.at(-1)!
    if (line && 21 + line.length + 1 + word.length > 100) lines.push(word)
    else lines[lines.length - 1] = line ? `${line} ${word}` : word
  }
  return lines.join(`\n${' '.repeat(21)}`)
}

/** --type: every type, by what it is for. */
export const TYPE_USAGE = `  --type T           ${wrapped(
  (Object.keys(USES) as KeyKind[]).map((kind) => `${typesOf(kind).join(', ')} (${USES[kind]})`).join('; '),
)}`

/** The keys that can take part in an ECDH. */
export const ECDH_KEYS = `${typesOf('ecdh').join(', ')} or a SECP key with ECDH`

/** --kid of sign and verify, and --alg's default. */
export const SIGNING_KEYS = `SECP* with ExDSA (ECDSA), ${either(typesOf('eddsa'))} (EdDSA), MLDSA* (ML-DSA)`

const bySecDigest = (Object.keys(ECDSA_ALG) as EcdsaDigest[]).map((digest) => {
  const curves = curvesOf('weierstrass').filter((curve) => CURVES[curve].digest === digest)
  return `SHA-${digest.slice(5)} (${curves.join(', ')})`
})
const pureEddsa = typesOf('eddsa').map((type) => defaultScheme(type) ?? type)

/** --alg's default, by the key's type. */
export const DEFAULT_SCHEMES = `ECDSA with ${either(bySecDigest)}, ${pureEddsa.join(', ')}, ML-DSA`
