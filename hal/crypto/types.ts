import type { Curve, EcdsaDigest, EdAlgorithm, EdCurve, SecCurve } from './curves.js'

export type { Curve, EcdsaDigest, EdAlgorithm, EdCurve, SecCurve }
export type Digest = 'SHA2-256' | 'SHA2-384' | 'SHA2-512' | 'SHA3-256' | 'SHA3-384' | 'SHA3-512'
export type MlKemVariant = 'MLKEM512' | 'MLKEM768' | 'MLKEM1024'
export type MlDsaVariant = 'MLDSA44' | 'MLDSA65' | 'MLDSA87'

/** `n` bytes from a random source (the HAL entropy source's `read`, or a seeded one in tests). */
export type RandomSource = (n: number) => Uint8Array

export interface KeyPair {
  /** Raw scalar: 32/56 bytes for X25519/X448, big-endian and field-sized for the SEC curves. */
  privateKey: Uint8Array
  /** Raw u-coordinate for X25519/X448, compressed SEC1 for the SEC curves. */
  publicKey: Uint8Array
}

export interface GcmSealed {
  ciphertext: Uint8Array
  tag: Uint8Array
}

/**
 * The classical primitives the device needs (AES, ECDH, HKDF, ECDSA, EdDSA, HMAC, key wrap).
 * Every method validates its arguments (CryptoInputError) before touching key material, and
 * both engines answer identically.
 *
 * Every verify (here and `PostQuantum.mlDsaVerify`) answers false, never throws, for a public
 * key or signature it can judge malformed: wrong length or encoding, not a point, outside the
 * prime-order subgroup, a scalar out of range. CryptoInputError there means a wrong call, the
 * same whatever the key and signature: an unknown curve, digest or variant, an argument that is
 * not a Uint8Array, a context over 255 bytes (or Ed25519ctx without one).
 */
export interface CryptoEngine {
  readonly name: 'native' | 'noble'
  /** No padding: `data` must be a multiple of 16 bytes. */
  aesEcbEncrypt(key: Uint8Array, data: Uint8Array): Uint8Array
  aesEcbDecrypt(key: Uint8Array, data: Uint8Array): Uint8Array
  /** PKCS#7 padding is added on encrypt and removed on decrypt (CipherError when invalid). */
  aesCbcEncrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array
  aesCbcDecrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array
  /** 16-byte tag. The device always passes a 16-byte nonce; 12 to 64 bytes are accepted. */
  aesGcmEncrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): GcmSealed
  /** AuthenticationError when the tag does not verify. */
  aesGcmDecrypt(
    key: Uint8Array,
    nonce: Uint8Array,
    ciphertext: Uint8Array,
    tag: Uint8Array,
    aad?: Uint8Array,
  ): Uint8Array
  /**
   * The raw shared secret (the x-coordinate for the SEC curves). The peer key is raw for
   * X25519/X448, compressed or uncompressed SEC1 for the SEC curves.
   */
  ecdh(curve: Curve, privateKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array
  generateKeyPair(curve: Curve, random: RandomSource): KeyPair
  /** RFC 5869 with SHA-256; an absent salt means 32 zero bytes. */
  hkdfSha256(ikm: Uint8Array, salt: Uint8Array | undefined, info: Uint8Array, length: number): Uint8Array
  /**
   * The public key of a private scalar, as generateKeyPair returns it (derived keys need it). An
   * X25519/X448 scalar is clamped by the curve; a SEC scalar must be in [1, n) (CryptoInputError).
   */
  publicKey(curve: Curve, privateKey: Uint8Array): Uint8Array
  /** ECDSA over `digest(message)`, the signature DER-encoded (ECDSA-Sig-Value). */
  ecdsaSign(curve: SecCurve, privateKey: Uint8Array, digest: EcdsaDigest, message: Uint8Array): Uint8Array
  /** False for a wrong or malformed signature or key; the key is compressed or uncompressed SEC1. */
  ecdsaVerify(
    curve: SecCurve,
    publicKey: Uint8Array,
    digest: EcdsaDigest,
    message: Uint8Array,
    signature: Uint8Array,
  ): boolean
  /** RFC 8032 public key of a 32-byte (Ed25519) or 57-byte (Ed448) seed. */
  eddsaPublicKey(curve: EdCurve, seed: Uint8Array): Uint8Array
  /** Raw 64- or 114-byte signature. `context` at most 255 bytes; Ed25519ctx needs a non-empty one, Ed25519 none. */
  eddsaSign(algorithm: EdAlgorithm, seed: Uint8Array, message: Uint8Array, context: Uint8Array): Uint8Array
  /**
   * RFC 8032's strict rules, one for every variant and both engines: false unless the public key
   * passes `eddsaPublicKeyValid` (canonical, in the prime-order subgroup, not the identity), R is
   * canonical and in that subgroup, s < L, and the equation holds (within the subgroup the
   * cofactored and cofactorless equations agree).
   */
  eddsaVerify(
    algorithm: EdAlgorithm,
    publicKey: Uint8Array,
    message: Uint8Array,
    signature: Uint8Array,
    context: Uint8Array,
  ): boolean
  digest(digest: Digest, data: Uint8Array): Uint8Array
  hmac(digest: Digest, key: Uint8Array, message: Uint8Array): Uint8Array
  /** RFC 3394 (not 5649): `data` 16 bytes or more, a multiple of 8; `iv` 8 bytes, A6A6A6A6A6A6A6A6 when absent. */
  aesKeyWrap(kek: Uint8Array, data: Uint8Array, iv?: Uint8Array): Uint8Array
  /** AuthenticationError when the integrity check fails. */
  aesKeyUnwrap(kek: Uint8Array, wrapped: Uint8Array, iv?: Uint8Array): Uint8Array
}

/**
 * FIPS 203 ML-KEM and FIPS 204 ML-DSA (one implementation, @noble/post-quantum: node:crypto
 * has neither). Keys are kept as their seeds and expanded when used.
 */
export interface PostQuantum {
  /** `seed` is d‖z, 64 bytes. */
  mlKemKeyPair(variant: MlKemVariant, seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array }
  /** CryptoInputError when the encapsulation key fails FIPS 203's modulus check. */
  mlKemEncapsulate(
    variant: MlKemVariant,
    publicKey: Uint8Array,
    random: RandomSource,
  ): { cipherText: Uint8Array; sharedSecret: Uint8Array }
  /** CryptoInputError on a ciphertext of the wrong length (a wrong one of the right length decapsulates implicitly). */
  mlKemDecapsulate(variant: MlKemVariant, secretKey: Uint8Array, cipherText: Uint8Array): Uint8Array
  /** `seed` is ξ, 32 bytes. */
  mlDsaKeyPair(variant: MlDsaVariant, seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array }
  /** Pure ML-DSA with `context` (at most 255 bytes), hedged with 32 bytes of `random`. */
  mlDsaSign(
    variant: MlDsaVariant,
    secretKey: Uint8Array,
    message: Uint8Array,
    context: Uint8Array,
    random: RandomSource,
  ): Uint8Array
  /** False for a wrong or malformed signature or public key. */
  mlDsaVerify(
    variant: MlDsaVariant,
    publicKey: Uint8Array,
    message: Uint8Array,
    signature: Uint8Array,
    context: Uint8Array,
  ): boolean
}
