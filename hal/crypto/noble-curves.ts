// @noble/curves' object of each curve of the table (curves.ts), found by the name the table gives:
// a curve of a family noble knows needs no line here.
import * as ed25519Module from '@noble/curves/ed25519.js'
import * as ed448Module from '@noble/curves/ed448.js'
import * as nistModule from '@noble/curves/nist.js'
import * as secp256k1Module from '@noble/curves/secp256k1.js'
import { CURVES, ED_ALGORITHMS, ED_CURVES, edVariant, curvesOf } from './curves.js'
import type { EdAlgorithm, EdCurve, MontgomeryCurve, SecCurve } from './curves.js'

const NOBLE: Readonly<Record<string, unknown>> = { ...ed25519Module, ...ed448Module, ...nistModule, ...secp256k1Module }

type Weierstrass = typeof nistModule.p256
type Montgomery = typeof ed25519Module.x25519
type Edwards = typeof ed25519Module.ed25519

/** A table with a name noble lacks fails here, at load, not at the first use of the curve. */
function resolve<T>(name: string, check: (found: object) => boolean): T {
  const found = NOBLE[name]
  if (typeof found !== 'object' || found === null || !check(found))
    throw new Error(`@noble/curves has no curve named ${name}`)
  return found as T
}

function byName<C extends string, T>(keys: readonly C[], name: (key: C) => string, check: (found: object) => boolean) {
  return Object.fromEntries(keys.map((key) => [key, resolve<T>(name(key), check)])) as Readonly<Record<C, T>>
}

export const NOBLE_SEC = byName<SecCurve, Weierstrass>(
  curvesOf('weierstrass'),
  (curve) => CURVES[curve].noble,
  (found) => 'Point' in found && 'sign' in found,
)
export const NOBLE_MONTGOMERY = byName<MontgomeryCurve, Montgomery>(
  curvesOf('montgomery'),
  (curve) => CURVES[curve].noble,
  (found) => 'getSharedSecret' in found,
)
export const NOBLE_EDWARDS = byName<EdCurve, Edwards>(
  ED_CURVES,
  (curve) => CURVES[curve].noble,
  (found) => 'Point' in found && 'verify' in found,
)
export const NOBLE_EDDSA = byName<EdAlgorithm, Edwards>(
  ED_ALGORITHMS,
  (algorithm) => edVariant(algorithm).noble,
  (found) => 'sign' in found && 'verify' in found,
)

/**
 * A SEC curve's public key, compressed or not, as the key store keeps it (compressed SEC1);
 * undefined when it is not a point of the curve.
 */
export function compressedSecPoint(curve: SecCurve, bytes: Uint8Array): Uint8Array | undefined {
  try {
    const point = NOBLE_SEC[curve].Point.fromBytes(bytes)
    point.assertValidity()
    return point.toBytes(true)
  } catch {
    return undefined
  }
}
