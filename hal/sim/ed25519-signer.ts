import { createPublicKey, sign, type KeyObject } from 'node:crypto'
import type { EnclaveSigner } from '../types.js'

export class Ed25519Signer implements EnclaveSigner {
  readonly publicKey: Uint8Array
  readonly #privateKey: KeyObject

  constructor(privateKey: KeyObject) {
    this.#privateKey = privateKey
    this.publicKey = rawPublicKey(privateKey)
  }

  sign(message: Uint8Array): Uint8Array {
    return new Uint8Array(sign(null, message, this.#privateKey))
  }
}

/** The 32 raw bytes of an Ed25519 or X25519 public key (JWK `x`), from either half of the pair. */
export function rawPublicKey(key: KeyObject): Uint8Array {
  const { x } = createPublicKey(key).export({ format: 'jwk' })
  return new Uint8Array(Buffer.from(x ?? '', 'base64url'))
}
