// The curves, described once: what both engines, the key store, the management app's PEM and
// hemctl know of each. Free of node and of @noble (the app bundles it): a library's own object
// is found by the name given here (noble-curves.ts), a curve's DER prefixes are built from its OID.

/** The SHA-2 digests ECDSA takes. */
export type EcdsaDigest = 'SHA2-256' | 'SHA2-384' | 'SHA2-512'

interface CurveFacts {
  /** The AlgorithmIdentifier's OIDs in a SubjectPublicKeyInfo (RFC 8410, RFC 5480): algorithm, then parameters. */
  oids: readonly string[]
  /** `crv` of a JWK (RFC 8037, RFC 7518), as node:crypto imports the key. */
  jwk: string
  /** The name @noble/curves exports it by. */
  noble: string
}

/** X25519 and X448 (RFC 7748): a private key is `size` bytes, clamped by the ladder; the public key is u. */
export interface MontgomeryInfo extends CurveFacts {
  kind: 'montgomery'
  size: number
  p: bigint
  /** (A − 2) / 4, the ladder's constant (RFC 7748 §5). */
  a24: bigint
  /** log2 of the curve's cofactor (8, 4), which its twist's (4, 4) divides. */
  doublings: number
  /** RFC 7748 §5: X25519 ignores bit 255 of a u-coordinate; X448 uses all 448 bits. */
  topBitMasked: boolean
}

/** A NIST or SEC 2 curve: a private key is a scalar in [1, n) of `size` bytes; a public key is SEC1. */
export interface WeierstrassInfo extends CurveFacts {
  kind: 'weierstrass'
  size: number
  order: bigint
  /** The bits the first byte of a `size`-byte scalar can hold. */
  topByteMask: number
  /** OpenSSL's name (createECDH). */
  openssl: string
  /** The ECDSA digest of the curve's strength, hemctl's default. */
  digest: EcdsaDigest
}

/**
 * An RFC 8032 variant: how it takes a context (`none`: pure Ed25519 has no context input, one
 * given is ignored; `required`: Ed25519ctx without one would be Ed25519 in disguise), and whether
 * OpenSSL signs it (Node 20 takes neither context nor prehash: only with the context empty).
 */
export interface EdVariant {
  noble: string
  context: 'none' | 'required' | 'optional'
  openssl: boolean
}

/** An RFC 8032 curve: the seed and the public key are `size` bytes, a signature twice that. */
export interface EdwardsInfo extends CurveFacts {
  kind: 'edwards'
  size: number
  signature: number
  /** OpenSSL's Ed25519 equation is cofactorless, its Ed448 one cofactored (see eddsaRTorsionFree). */
  opensslCofactorless: boolean
  variants: Readonly<Record<string, EdVariant>>
}

export type CurveInfo = MontgomeryInfo | WeierstrassInfo | EdwardsInfo
/** A curve of ECDH. */
export type EcdhCurveInfo = MontgomeryInfo | WeierstrassInfo

const EC_PUBLIC_KEY = '1.2.840.10045.2.1'

export const CURVES = {
  CURVE25519: {
    kind: 'montgomery',
    size: 32,
    oids: ['1.3.101.110'],
    jwk: 'X25519',
    noble: 'x25519',
    p: 2n ** 255n - 19n,
    a24: 121665n,
    doublings: 3,
    topBitMasked: true,
  },
  CURVE448: {
    kind: 'montgomery',
    size: 56,
    oids: ['1.3.101.111'],
    jwk: 'X448',
    noble: 'x448',
    p: 2n ** 448n - 2n ** 224n - 1n,
    a24: 39081n,
    doublings: 2,
    topBitMasked: false,
  },
  SECP256R1: {
    kind: 'weierstrass',
    size: 32,
    order: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
    topByteMask: 0xff,
    oids: [EC_PUBLIC_KEY, '1.2.840.10045.3.1.7'],
    jwk: 'P-256',
    noble: 'p256',
    openssl: 'prime256v1',
    digest: 'SHA2-256',
  },
  SECP384R1: {
    kind: 'weierstrass',
    size: 48,
    order: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
    topByteMask: 0xff,
    oids: [EC_PUBLIC_KEY, '1.3.132.0.34'],
    jwk: 'P-384',
    noble: 'p384',
    openssl: 'secp384r1',
    digest: 'SHA2-384',
  },
  SECP521R1: {
    kind: 'weierstrass',
    size: 66,
    // The order's 132 hex digits, split to keep the line short.
    order: BigInt(
      '0x01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff' +
        'fa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409',
    ),
    // 521 bits in 66 bytes: only the low bit of the first byte can be set.
    topByteMask: 0x01,
    oids: [EC_PUBLIC_KEY, '1.3.132.0.35'],
    jwk: 'P-521',
    noble: 'p521',
    openssl: 'secp521r1',
    digest: 'SHA2-512',
  },
  SECP256K1: {
    kind: 'weierstrass',
    size: 32,
    order: 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n,
    topByteMask: 0xff,
    oids: [EC_PUBLIC_KEY, '1.3.132.0.10'],
    jwk: 'secp256k1',
    noble: 'secp256k1',
    openssl: 'secp256k1',
    digest: 'SHA2-256',
  },
  ED25519: {
    kind: 'edwards',
    size: 32,
    signature: 64,
    oids: ['1.3.101.112'],
    jwk: 'Ed25519',
    noble: 'ed25519',
    opensslCofactorless: true,
    variants: {
      Ed25519: { noble: 'ed25519', context: 'none', openssl: true },
      Ed25519ctx: { noble: 'ed25519ctx', context: 'required', openssl: false },
      Ed25519ph: { noble: 'ed25519ph', context: 'optional', openssl: false },
    },
  },
  ED448: {
    kind: 'edwards',
    size: 57,
    signature: 114,
    oids: ['1.3.101.113'],
    jwk: 'Ed448',
    noble: 'ed448',
    opensslCofactorless: false,
    variants: {
      Ed448: { noble: 'ed448', context: 'optional', openssl: true },
      Ed448ph: { noble: 'ed448ph', context: 'optional', openssl: false },
    },
  },
} as const satisfies Record<string, CurveInfo>

type Table = typeof CURVES
export type CurveName = keyof Table
export type CurveOf<K extends CurveInfo['kind']> = {
  [C in CurveName]: Table[C]['kind'] extends K ? C : never
}[CurveName]
/** The curves of ECDH (and of the SEC curves, ECDSA). */
export type Curve = CurveOf<'montgomery' | 'weierstrass'>
export type MontgomeryCurve = CurveOf<'montgomery'>
export type SecCurve = CurveOf<'weierstrass'>
export type EdCurve = CurveOf<'edwards'>
/** RFC 8032's variants: Ed25519 pure (no context), with context, prehashed; Ed448 pure (with context) and prehashed. */
export type EdAlgorithm = { [C in EdCurve]: keyof Table[C]['variants'] }[EdCurve]

const names = Object.keys(CURVES) as CurveName[]

/** The curves of one kind, in the table's order. */
export function curvesOf<K extends CurveInfo['kind']>(...kinds: K[]): CurveOf<K>[] {
  return names.filter((name) => (kinds as string[]).includes(CURVES[name].kind)) as CurveOf<K>[]
}

export const ECDH_CURVES: readonly Curve[] = curvesOf('montgomery', 'weierstrass')
export const ED_CURVES: readonly EdCurve[] = curvesOf('edwards')

const ED_VARIANTS = Object.fromEntries(
  ED_CURVES.flatMap((curve) =>
    Object.entries(CURVES[curve].variants).map(([algorithm, variant]) => [algorithm, { curve, ...variant }]),
  ),
) as Readonly<Record<EdAlgorithm, EdVariant & { curve: EdCurve }>>

/** RFC 8032's variants. */
export const ED_ALGORITHMS = Object.keys(ED_VARIANTS) as readonly EdAlgorithm[]

export function edVariant(algorithm: EdAlgorithm): EdVariant & { curve: EdCurve } {
  return ED_VARIANTS[algorithm]
}

export function edCurveOf(algorithm: EdAlgorithm): EdCurve {
  return ED_VARIANTS[algorithm].curve
}

export function isMontgomery(curve: Curve): curve is MontgomeryCurve {
  return CURVES[curve].kind === 'montgomery'
}

/** An ECDH curve (an EdDSA curve is not one). */
export function isCurve(value: unknown): value is Curve {
  return typeof value === 'string' && Object.hasOwn(CURVES, value) && CURVES[value as CurveName].kind !== 'edwards'
}

/**
 * Big-endian. Built byte by byte, not through a hex string: scalars are secret, and a string
 * can be neither wiped nor kept out of V8's heap.
 */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return value
}
