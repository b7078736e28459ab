import { ed25519 } from '@noble/curves/ed25519.js'
import { ed448 } from '@noble/curves/ed448.js'
import { p256, p384, p521 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keyTypes, type KeyType } from '../../protocol/index.js'

const SEC = { SECP256R1: p256, SECP384R1: p384, SECP521R1: p521, SECP256K1: secp256k1 } as const
const EDDSA = { ED25519: ed25519, ED448: ed448 } as const
const MONTGOMERY_BYTES = { CURVE25519: 32, CURVE448: 56 } as const

/**
 * A public key of `type` in the form the device stores and shows (raw for X25519/X448/Ed*,
 * compressed SEC1 for the SECP curves; uncompressed SEC1 is accepted and compressed), or
 * undefined when the bytes are not a valid public key of that type. Points off the curve are
 * refused here, so that they never reach an ECDH.
 */
export function normalisePublicKey(type: KeyType, bytes: Uint8Array): Uint8Array | undefined {
  const { kind } = keyTypes[type]
  try {
    if (kind === 'ecdh')
      return bytes.length === MONTGOMERY_BYTES[type as keyof typeof MONTGOMERY_BYTES]
        ? Uint8Array.from(bytes)
        : undefined
    if (kind === 'eddsa') {
      EDDSA[type as keyof typeof EDDSA].Point.fromBytes(bytes)
      return Uint8Array.from(bytes)
    }
    if (kind === 'ec') {
      const point = SEC[type as keyof typeof SEC].Point.fromBytes(bytes)
      point.assertValidity()
      return point.toBytes(true)
    }
  } catch {
    return undefined
  }
  return undefined
}
