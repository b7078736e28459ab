/** An HMAC-SHA256 key agreed by X25519 (S_pair, S_ab): the web provider never lets its bytes reach JS. */
export interface AgreedKey {
  hmac(data: Uint8Array): Promise<Uint8Array>
}

/** One pairing's private key `aid_prv`: raw bytes sealed at rest (CLI) or a non-extractable CryptoKey (web). */
export interface AidKey {
  readonly aid: Uint8Array
  /** X25519 with a peer's public key; ExtAuthKeyError for a bad key or an all-zero output (§2.2). */
  agree(peer: Uint8Array): Promise<AgreedKey>
}

/** A new `aid_prv` and the handle its provider's store keeps it by. */
export interface NewAidKey<H> {
  key: AidKey
  handle: H
}

/**
 * The primitives of scope sealing (§2.5) under K = HMAC(S_pair, jti): K is bytes in JS in either provider (it is
 * a MAC output), the AES-CBC key and IV are its halves.
 */
export interface ScopeCipher {
  hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array>
  /** AES-128-CBC with PKCS#7. */
  encrypt(key: Uint8Array, iv: Uint8Array, plain: Uint8Array): Promise<Uint8Array>
  /** Rejects on bad padding. */
  decrypt(key: Uint8Array, iv: Uint8Array, ct: Uint8Array): Promise<Uint8Array>
}

/**
 * Where the authenticator's keys live, and the crypto it computes with: noble over sealed raw bytes (the CLI) or
 * WebCrypto over non-extractable keys (the web page). `H` is what a pairing store keeps of a key.
 */
export interface KeyProvider<H> extends ScopeCipher {
  /** A fresh `aid_prv` (§4.1 step 3: one per pairing). */
  generate(): Promise<NewAidKey<H>>
  /** `aid_prv` from given bytes, clamped: for the known-answer vectors. */
  fromSeed(seed: Uint8Array): Promise<NewAidKey<H>>
  /** A stored pairing's key; PairingError when the handle does not hold the key of `aid`. */
  open(handle: H, aid: Uint8Array): Promise<AidKey>
}
