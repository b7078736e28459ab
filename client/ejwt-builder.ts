import { createHmac } from 'node:crypto'
import { x25519 } from '@noble/curves/ed25519.js'

export const EJWT_HEADER = '{"ecdh":"x25519","alg":"HS256","typ":"JWT"}'

export interface EjwtInput {
  /** The client's X25519 private key (the passphrase seed). */
  seed: Uint8Array
  /** The device's session public key, raw or as the base64 the device sent. */
  spk: Uint8Array | string
  /** Serialised with JSON.stringify, unless `payloadJson` is given. */
  claims?: Record<string, unknown>
  /** Exact payload text, to reproduce other clients' key order or `\/` escapes. */
  payloadJson?: string
  /** Exact header text; default EJWT_HEADER. */
  headerJson?: string
}

function bytes(value: Uint8Array | string): Uint8Array {
  return typeof value === 'string' ? new Uint8Array(Buffer.from(value, 'base64')) : value
}

/** X25519(seed, spk): the HMAC key of both the eJWT and the passphrase-change proof. */
function sharedKey(seed: Uint8Array, spk: Uint8Array | string): Uint8Array {
  return x25519.getSharedSecret(seed, bytes(spk))
}

/** `b64url(header).b64url(payload).b64url(HMAC-SHA256(X25519(seed, spk), first two parts))`. */
export function buildEjwt(input: EjwtInput): string {
  if ((input.claims === undefined) === (input.payloadJson === undefined)) throw new TypeError('give exactly one of claims and payloadJson')
  const payload = input.payloadJson ?? JSON.stringify(input.claims)
  const signingInput = `${Buffer.from(input.headerJson ?? EJWT_HEADER).toString('base64url')}.${Buffer.from(payload).toString('base64url')}`
  const mac = createHmac('sha256', sharedKey(input.seed, input.spk)).update(signingInput, 'ascii').digest()
  return `${signingInput}.${mac.toString('base64url')}`
}

/** `userkey_hmac` of a passphrase change: b64(HMAC-SHA256(X25519(new seed, spk), b64decode(nonce))). */
export function passphraseChangeHmac(newSeed: Uint8Array, spk: Uint8Array | string, nonceB64: string): string {
  return createHmac('sha256', sharedKey(newSeed, spk)).update(Buffer.from(nonceB64, 'base64')).digest('base64')
}
