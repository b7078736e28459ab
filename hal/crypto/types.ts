export type Curve = 'CURVE25519' | 'CURVE448' | 'SECP256R1' | 'SECP384R1' | 'SECP521R1' | 'SECP256K1'

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
 * The AES, ECDH and HKDF primitives the device needs. Every method validates its arguments
 * (CryptoInputError) before touching key material, and both engines answer identically.
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
}
