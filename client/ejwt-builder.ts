// eJWTs with nothing but @noble: the same code runs in Node and in the management app's page.
import { x25519 } from '@noble/curves/ed25519.js'
import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { fromBase64, toBase64, toBase64Url } from './base64.js'
import type { PassphraseKey } from './passphrase-key.js'

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

/** What of a login challenge (GET /api/auth/token) the answer's eJWT carries. */
export interface LoginChallenge {
  spk: string
  jti: string
}

const utf8 = (text: string) => new TextEncoder().encode(text)

function bytes(value: Uint8Array | string): Uint8Array {
  return typeof value === 'string' ? fromBase64(value) : value
}

/** X25519(seed, spk): the HMAC key of both the eJWT and the passphrase-change proof. */
function sharedKey(seed: Uint8Array, spk: Uint8Array | string): Uint8Array {
  return x25519.getSharedSecret(seed, bytes(spk))
}

/** `b64url(header).b64url(payload).b64url(HMAC-SHA256(X25519(seed, spk), first two parts))`. */
export function buildEjwt(input: EjwtInput): string {
  if ((input.claims === undefined) === (input.payloadJson === undefined))
    throw new TypeError('give exactly one of claims and payloadJson')
  const payload = input.payloadJson ?? JSON.stringify(input.claims)
  const signingInput = `${toBase64Url(utf8(input.headerJson ?? EJWT_HEADER))}.${toBase64Url(utf8(payload))}`
  return `${signingInput}.${toBase64Url(hmac(sha256, sharedKey(input.seed, input.spk), utf8(signingInput)))}`
}

/** The `auth` of POST /api/auth/token: a token for `scope`, living `lifetimeSeconds` from now. */
export function buildLoginEjwt(
  key: PassphraseKey,
  challenge: LoginChallenge,
  scope: string,
  lifetimeSeconds: number,
): string {
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    jti: challenge.jti,
    aud: challenge.spk,
    exp: now + lifetimeSeconds,
    iat: now,
    iss: toBase64(key.publicKey),
    scope,
  }
  return buildEjwt({ seed: key.seed, spk: challenge.spk, claims })
}

/**
 * The `init` of POST /api/auth/init: the configuration `cfg`, signed by the master passphrase's key and issued at
 * `iat`.
 */
export function buildInitEjwt(
  master: PassphraseKey,
  challenge: LoginChallenge & { exp: number },
  cfg: Record<string, unknown>,
  iat: number,
): string {
  const claims = {
    jti: challenge.jti,
    aud: challenge.spk,
    exp: challenge.exp,
    iat,
    iss: toBase64(master.publicKey),
    cfg,
  }
  return buildEjwt({ seed: master.seed, spk: challenge.spk, claims })
}

/** `userkey_hmac` of a passphrase change: b64(HMAC-SHA256(X25519(new seed, spk), b64decode(nonce))). */
export function passphraseChangeHmac(newSeed: Uint8Array, spk: Uint8Array | string, nonceB64: string): string {
  return toBase64(hmac(sha256, sharedKey(newSeed, spk), fromBase64(nonceB64)))
}
