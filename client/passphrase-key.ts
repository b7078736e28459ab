// Passphrase keys, with nothing but Web Crypto and @noble: the same code runs in Node and in
// the management app's page.
import { x25519 } from '@noble/curves/ed25519.js'
import { pbkdf2Async } from '@noble/hashes/pbkdf2.js'
import { sha256 } from '@noble/hashes/sha2.js'

/** The X25519 key pair a passphrase stands for on one device. */
export interface PassphraseKey {
  /** PBKDF2 output, used as the raw X25519 private key. */
  seed: Uint8Array
  publicKey: Uint8Array
}

export const PBKDF2_ITERATIONS = 600_000

export function passphraseKeyFromSeed(seed: Uint8Array): PassphraseKey {
  return { seed, publicKey: x25519.getPublicKey(seed) }
}

/**
 * The salt: each UTF-16 unit of `eid` cut to a byte, as
 * Buffer.from(eid, 'ascii') does (the device's eid is base64).
 */
export function eidSalt(eid: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from({ length: eid.length }, (_, i) => eid.charCodeAt(i) & 0xff)
}

/**
 * seed = PBKDF2-HMAC-SHA256(passphrase UTF-8, salt = the ASCII bytes of `eid` exactly as the
 * device sent it, 600000 iterations, 32 bytes). Web Crypto runs it natively off the main
 * thread, in Node and in a page of a secure context (HTTPS or loopback); a page served over
 * plain HTTP from a LAN address has no Web Crypto and pays about a second of pure JS instead.
 */
export async function derivePassphraseKeyAsync(passphrase: string, eid: string): Promise<PassphraseKey> {
  const password = new TextEncoder().encode(passphrase)
  const salt = eidSalt(eid)
  const subtle = globalThis.crypto?.subtle
  if (!subtle)
    return passphraseKeyFromSeed(await pbkdf2Async(sha256, password, salt, { c: PBKDF2_ITERATIONS, dkLen: 32 }))
  const material = await subtle.importKey('raw', password, 'PBKDF2', false, ['deriveBits'])
  const bits = await subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations: PBKDF2_ITERATIONS },
    material,
    256,
  )
  return passphraseKeyFromSeed(new Uint8Array(bits))
}
