import {
  type CryptoEngine,
  type MlDsaVariant,
  type MlKemVariant,
  postQuantum,
  type RandomSource,
} from '../../hal/index.js'
import { keyTypes, type KeyType } from '../../protocol/index.js'

/**
 * Fresh key material of a type: the secret (the key itself, the private scalar, the RFC 8032
 * seed, or the FIPS 203/204 seed of a post-quantum key) and, for asymmetric keys, the public key.
 */
export function generateKeyMaterial(
  type: KeyType,
  engine: CryptoEngine,
  random: RandomSource,
): { secret: Uint8Array; publicKey?: Uint8Array } {
  const spec = keyTypes[type]
  switch (spec.kind) {
    case 'aes':
    case 'hmac':
      return { secret: drawn(random, spec.bytes) }
    case 'ecdh':
    case 'ec': {
      const pair = engine.generateKeyPair(spec.curve, random)
      return { secret: pair.privateKey, publicKey: pair.publicKey }
    }
    case 'eddsa': {
      // RFC 8032: the seed is as long as the public key (32 bytes for Ed25519, 57 for Ed448).
      const seed = drawn(random, spec.publicKey)
      return { secret: seed, publicKey: engine.eddsaPublicKey(spec.curve, seed) }
    }
    case 'mlkem':
    case 'mldsa': {
      // Only the seed is kept: the expanded secret key is made again on each use.
      const seed = drawn(random, spec.seed)
      const pair =
        spec.kind === 'mlkem'
          ? postQuantum.mlKemKeyPair(type as MlKemVariant, seed)
          : postQuantum.mlDsaKeyPair(type as MlDsaVariant, seed)
      pair.secretKey.fill(0)
      return { secret: seed, publicKey: pair.publicKey }
    }
  }
}

/** `n` random bytes in an array of their own (not a Buffer's pooled memory); the source's copy is wiped. */
function drawn(random: RandomSource, n: number): Uint8Array {
  const bytes = random(n)
  const own = Uint8Array.from(bytes)
  bytes.fill(0)
  return own
}
