import type { Curve } from './types.js'

/** What both engines must agree on about a curve, independent of any library. */
export type CurveInfo =
  { kind: 'montgomery'; size: number } | { kind: 'weierstrass'; size: number; order: bigint; topByteMask: number }

export const CURVES: Readonly<Record<Curve, CurveInfo>> = {
  CURVE25519: { kind: 'montgomery', size: 32 },
  CURVE448: { kind: 'montgomery', size: 56 },
  SECP256R1: {
    kind: 'weierstrass',
    size: 32,
    order: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n,
    topByteMask: 0xff,
  },
  SECP384R1: {
    kind: 'weierstrass',
    size: 48,
    order: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
    topByteMask: 0xff,
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
  },
  SECP256K1: {
    kind: 'weierstrass',
    size: 32,
    order: 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n,
    topByteMask: 0xff,
  },
}

export type MontgomeryCurve = 'CURVE25519' | 'CURVE448'
export type SecCurve = Exclude<Curve, MontgomeryCurve>

export function isMontgomery(curve: Curve): curve is MontgomeryCurve {
  return CURVES[curve].kind === 'montgomery'
}

export function isCurve(value: unknown): value is Curve {
  return typeof value === 'string' && Object.hasOwn(CURVES, value)
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
