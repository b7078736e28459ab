import { ed25519 } from '@noble/curves/ed25519.js'
import { ed448 } from '@noble/curves/ed448.js'
import type { CryptoEngine, RandomSource } from '../../hal/index.js'
import { keyTypes, type KeyType } from '../../protocol/index.js'

const EDDSA = { ED25519: { curve: ed25519, seedBytes: 32 }, ED448: { curve: ed448, seedBytes: 57 } } as const

/** Fresh key material of a type: the secret (or private part) and, for asymmetric keys, the public key. */
export function generateKeyMaterial(
  type: KeyType,
  engine: CryptoEngine,
  random: RandomSource,
): { secret: Uint8Array; publicKey?: Uint8Array } {
  const spec = keyTypes[type]
  switch (spec.kind) {
    case 'aes':
    case 'hmac':
      return { secret: Uint8Array.from(random(spec.bytes)) }
    case 'ecdh':
    case 'ec': {
      const pair = engine.generateKeyPair(spec.curve, random)
      return { secret: pair.privateKey, publicKey: pair.publicKey }
    }
    case 'eddsa': {
      // Signing is not offered by this API yet; the key is made (RFC 8032 seed) so it can be listed and exported.
      const { curve, seedBytes } = EDDSA[type as keyof typeof EDDSA]
      const seed = Uint8Array.from(random(seedBytes))
      return { secret: seed, publicKey: curve.getPublicKey(seed) }
    }
  }
}
