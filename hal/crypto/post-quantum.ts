// FIPS 203 ML-KEM and FIPS 204 ML-DSA on @noble/post-quantum, every argument checked first.
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js'
import { ml_kem512, ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js'
import { CryptoInputError } from './errors.js'
import type { MlDsaVariant, MlKemVariant, PostQuantum } from './types.js'
import { checkBytes, checkContext, checkLength, checkName, drawOwnedBytes } from './validate.js'

const ML_KEM: Record<MlKemVariant, typeof ml_kem768> = {
  MLKEM512: ml_kem512,
  MLKEM768: ml_kem768,
  MLKEM1024: ml_kem1024,
}
const ML_DSA: Record<MlDsaVariant, typeof ml_dsa65> = { MLDSA44: ml_dsa44, MLDSA65: ml_dsa65, MLDSA87: ml_dsa87 }
const ML_KEM_VARIANTS = Object.keys(ML_KEM) as MlKemVariant[]
const ML_DSA_VARIANTS = Object.keys(ML_DSA) as MlDsaVariant[]
// FIPS 203's m and FIPS 204's rnd are both 32 bytes.
const RANDOM_BYTES = 32
// FIPS 203: an encapsulation key is k·256 12-bit coefficients (384·k bytes), then the 32-byte seed ρ.
const ML_KEM_Q = 3329
const ML_KEM_RHO = 32

/** FIPS 203 §7.2: every 12-bit coefficient of the encapsulation key is below q. */
export function mlKemModulusHolds(key: Uint8Array): boolean {
  const end = key.length - ML_KEM_RHO
  for (let i = 0; i < end; i += 3) {
    const [a, b, c] = [key[i]!, key[i + 1]!, key[i + 2]!]
    if ((a | ((b & 0x0f) << 8)) >= ML_KEM_Q || ((b >> 4) | (c << 4)) >= ML_KEM_Q) return false
  }
  return true
}

function mlKem(variant: unknown) {
  checkName(variant, ML_KEM_VARIANTS, 'ML-KEM variant')
  return { kem: ML_KEM[variant], lengths: ML_KEM[variant].lengths as Required<typeof ml_kem768.lengths> }
}

function mlDsa(variant: unknown) {
  checkName(variant, ML_DSA_VARIANTS, 'ML-DSA variant')
  return { dsa: ML_DSA[variant], lengths: ML_DSA[variant].lengths as Required<typeof ml_dsa65.lengths> }
}

export const postQuantum: PostQuantum = {
  mlKemKeyPair(variant, seed) {
    const { kem, lengths } = mlKem(variant)
    checkLength(seed, 'ML-KEM seed', lengths.seed)
    const { publicKey, secretKey } = kem.keygen(seed)
    return { publicKey, secretKey }
  },
  mlKemEncapsulate(variant, publicKey, random) {
    const { kem, lengths } = mlKem(variant)
    checkLength(publicKey, 'ML-KEM encapsulation key', lengths.publicKey)
    if (!mlKemModulusHolds(publicKey)) throw new CryptoInputError('ML-KEM encapsulation key fails the modulus check')
    const m = drawOwnedBytes(random, RANDOM_BYTES)
    try {
      const { cipherText, sharedSecret } = kem.encapsulate(publicKey, m)
      return { cipherText, sharedSecret }
    } finally {
      m.fill(0)
    }
  },
  mlKemDecapsulate(variant, secretKey, cipherText) {
    const { kem, lengths } = mlKem(variant)
    checkLength(secretKey, 'ML-KEM decapsulation key', lengths.secretKey)
    checkLength(cipherText, 'ML-KEM ciphertext', lengths.cipherText)
    try {
      return kem.decapsulate(cipherText, secretKey)
    } catch (cause) {
      // A wrong ciphertext never throws (implicit rejection); only a key failing FIPS 203's hash check does.
      throw new CryptoInputError('ML-KEM decapsulation key fails the hash check', { cause })
    }
  },
  mlDsaKeyPair(variant, seed) {
    const { dsa, lengths } = mlDsa(variant)
    checkLength(seed, 'ML-DSA seed', lengths.seed)
    const { publicKey, secretKey } = dsa.keygen(seed)
    return { publicKey, secretKey }
  },
  mlDsaSign(variant, secretKey, message, context, random) {
    const { dsa, lengths } = mlDsa(variant)
    checkLength(secretKey, 'ML-DSA secret key', lengths.secretKey)
    checkBytes(message, 'message')
    checkContext(context)
    const rnd = drawOwnedBytes(random, RANDOM_BYTES)
    try {
      return dsa.sign(message, secretKey, { context, extraEntropy: rnd })
    } catch (cause) {
      // noble decodes the key as it signs: a coefficient outside FIPS 204's range throws.
      throw new CryptoInputError('ML-DSA secret key is malformed', { cause })
    } finally {
      rnd.fill(0)
    }
  },
  mlDsaVerify(variant, publicKey, message, signature, context) {
    const { dsa, lengths } = mlDsa(variant)
    checkBytes(publicKey, 'ML-DSA public key')
    checkBytes(message, 'message')
    checkBytes(signature, 'signature')
    checkContext(context)
    if (publicKey.length !== lengths.publicKey || signature.length !== lengths.signature) return false
    try {
      return dsa.verify(signature, message, publicKey, { context })
    } catch {
      // noble throws on some malformed encodings (e.g. a bad hint); the interface answers false.
      return false
    }
  },
}
