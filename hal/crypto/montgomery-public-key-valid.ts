// The rule the key store applies to an imported X25519 or X448 public key, as it applies
// eddsaPublicKeyValid to an EdDSA one: no point of small order.
import { CURVES, type MontgomeryCurve } from './curves.js'

/**
 * Whether `publicKey` is a u-coordinate of the right length whose point is not of small order.
 * With a point of small order as the peer, every private key agrees on the all-zero secret
 * (RFC 7748 §6), so such a key is only good for refusals: every use of it fails. It is found
 * as RFC 7748 decodes it (little-endian, X25519's bit 255 masked, reduced mod p, so that every
 * encoding of one counts): [cofactor]P, by x-only doublings, is the point at infinity (Z = 0).
 * A u-coordinate may also name a point of the twist, whose small orders divide the same cofactor.
 */
export function montgomeryPublicKeyValid(curve: MontgomeryCurve, publicKey: Uint8Array): boolean {
  const { size: bytes, p, a24, doublings, topBitMasked } = CURVES[curve]
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== bytes) return false
  // Little-endian: a reversed copy read as hex (a BigInt per byte costs ten times more).
  let u = BigInt(`0x${Buffer.from(publicKey).reverse().toString('hex')}`)
  if (topBitMasked) u &= (1n << BigInt(bytes * 8 - 1)) - 1n
  let x = u % p
  let z = 1n
  for (let i = 0; i < doublings; i++) {
    const a = x + z
    const b = x - z
    const aa = (a * a) % p
    const bb = (b * b) % p
    const e = aa - bb
    x = (aa * bb) % p
    z = (e * (aa + a24 * e)) % p
  }
  return z !== 0n
}
