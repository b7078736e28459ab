// What the device answers, as the client library hands it over, and what its calls take.
import type { Digest, KeyType, MirrorStatus, SelfTestAnswer, SignedHead } from '../protocol/browser.js'

export type { Digest, KeyType }

export interface InitChallenge {
  exp: number
  spk: string
  jti: string
  eid: string
  /** P: the enclave's attestation data, base64. */
  genuine?: string
}

export interface TokenChallenge {
  exp: number
  spk: string
  jti: string
  eid: string
  lbl?: string
}

export interface Personalised {
  instanceid: string
  /** The user's `system:config` token. */
  token: string
  csr?: string
  genuine?: string
}

export interface Status {
  ctx: number
  fls_state: number
  uptime: number
  temp: number
  ts: number
  time?: number
  https?: string
  hostname?: string
  /** Present (false) only before personalisation. */
  inited?: boolean
  storage?: [string, string]
  format?: string
  fw_upgrade?: unknown
  tts?: number
  repo_stats?: { total: number; deleted: number; invalid: number; freeespace: number; fragmentation: number }
  /** The journal mirror, on a device given a fleet backend. */
  mirror?: MirrorStatus
  /** Present only when the owner set the CORS origin `*`: every web page may call the routes that need no token. */
  origin?: '*'
  [field: string]: unknown
}

export interface Version {
  hwv: string
  fwv: string
  fwk?: string
  fws?: string
  blv?: string
  blk?: string
  bls?: string
  uis?: string
  [field: string]: unknown
}

/** Every configuration field, a passphrase-change `nonce` and the session's `spk`. */
export type Config = Record<string, unknown> & { nonce?: string; spk?: string }

export interface ConfigUpdated {
  updated: boolean
  reboot_required?: boolean
  csr?: string
  genuine?: string
}

export interface Attestation {
  genuine: string
  csr?: string
  crt?: string
}

/** `GET /api/system/selftest` (crypto-contract §5): `se_state` on P only. */
export type Selftest = SelfTestAnswer

export interface KeySpec {
  label: string
  /** One of the 23 types (AES256, ED25519, SECP256R1, SHA3-256, MLKEM768, MLDSA65...); others go as given. */
  type: KeyType | (string & {})
  /**
   * For the SECP curves: ECDH (default), ExDSA or `ECDH,ExDSA`. Every other type ignores it, so
   * what the family's SDKs send (the type's name) is harmless.
   */
  mode?: string
  /** At most 64 bytes, stored with the key and searchable. */
  descr?: Uint8Array
}

export interface KeyEntry {
  kid: string
  created: number
  updated: number
  type: string
  label: string
  descr?: string
}

export interface KeyList {
  offset: number
  total: number
  listed: number
  deleted?: number
  list: KeyEntry[]
}

export interface KeyDetails {
  type: string
  pubkey?: string
  updated: number
  descr?: string
}

export type CipherAlg = `AES${128 | 192 | 256}-${'ECB' | 'CBC' | 'GCM'}`

export interface EncryptInput {
  alg: CipherAlg
  kid: string
  msg: Uint8Array
  aad?: Uint8Array
  /** With an ECDH key: the HKDF context. */
  ctx?: Uint8Array
  /** With an ECDH key, the peer: a stored public key... */
  extKid?: string
  /** ...or a public key given here. */
  pubkey?: Uint8Array
}

export interface Encrypted {
  ciphertext: Uint8Array
  iv?: Uint8Array
  tag?: Uint8Array
}

export interface DecryptInput extends EncryptInput {
  iv?: Uint8Array
  tag?: Uint8Array
}

/** The peer of an ECDH mode: a public key stored in the device, or one given here (not both). */
export interface Peer {
  extKid?: string
  /** Raw X25519 (32 bytes) or X448 (56), or a SEC1 point (compressed: 33, 49, 67 bytes). */
  pubkey?: Uint8Array
}

export type EcdsaAlg = 'SHA256WithECDSA' | 'SHA384WithECDSA' | 'SHA512WithECDSA'
/** RFC 8032: Ed25519 (pure, no context), Ed25519ctx (a context needed), Ed25519ph, Ed448, Ed448ph. */
export type EddsaAlg = 'Ed25519' | 'Ed25519ctx' | 'Ed25519ph' | 'Ed448' | 'Ed448ph'
export type SignAlg = EcdsaAlg | EddsaAlg

export interface SignInput {
  /** A SECP key with the ExDSA flag (ECDSA), or an ED25519/ED448 key (EdDSA). */
  kid: string
  /** 1 to 2048 bytes; the device hashes it (ECDSA) or signs it as RFC 8032 says. */
  msg: Uint8Array
  alg: SignAlg
  /** At most 255 bytes; ignored by Ed25519 and ECDSA. */
  ctx?: Uint8Array
}

export interface VerifyInput extends SignInput {
  /** DER for ECDSA, raw (64 or 114 bytes) for EdDSA. */
  signature: Uint8Array
}

export interface HmacInput extends Peer {
  /** An HMAC key (SHA2-*, SHA3-*), or an ECDH key with a peer. */
  kid: string
  /** 1 to 2048 bytes. */
  msg: Uint8Array
  /** Required in ECDH mode, where the HMAC key is the raw shared secret; an HMAC key's type fixes its digest. */
  alg?: Digest
}

export interface HmacVerifyInput extends HmacInput {
  mac: Uint8Array
}

export interface EcdhInput extends Peer {
  kid: string
  /** Absent: the secret's first 32 bytes. Present: that digest of the whole secret. */
  alg?: Digest
}

export type WrapAlg = 'AES128' | 'AES192' | 'AES256'

export interface WrapInput extends Peer {
  /** An AES key (the KEK, cut to `alg`'s width), or an ECDH key with a peer (KEK from HKDF). */
  kid: string
  /** Wrap: the key to wrap, 16 to 2048 bytes, a multiple of 8. Unwrap: the wrapped key (8 bytes longer). */
  msg: Uint8Array
  /** The KEK's width (default AES256). */
  alg?: WrapAlg
  /** ECDH mode: the HKDF context, at most 64 bytes. */
  ctx?: Uint8Array
  /** RFC 3394's initial value, 8 bytes (default A6A6A6A6A6A6A6A6). */
  iv?: Uint8Array
}

export interface Encapsulated {
  /** The key's variant, e.g. MLKEM768. */
  alg: string
  /** 32 bytes, the same the key's holder gets from `ciphertext`. */
  sharedSecret: Uint8Array
  /** 768, 1088 or 1568 bytes. */
  ciphertext: Uint8Array
}

export interface Decapsulated {
  alg: string
  sharedSecret: Uint8Array
}

export interface MlDsaSignInput {
  kid: string
  /** 1 to 2048 bytes. */
  msg: Uint8Array
  /** At most 255 bytes (default empty). */
  ctx?: Uint8Array
}

export interface MlDsaVerifyInput extends MlDsaSignInput {
  /** 2420, 3309 or 4627 bytes (ML-DSA-44, 65, 87). */
  signature: Uint8Array
}

export interface MlDsaSigned {
  /** The key's variant, e.g. MLDSA65. */
  alg: string
  signature: Uint8Array
}

/** A new key from an ECDH of `kid` with the peer: HKDF-SHA256 of the secret, info "encedo-<type>". */
export interface DeriveInput extends KeySpec, Peer {
  /** The source: an ECDH-capable key. */
  kid: string
}

export interface LogKey {
  key: string
  nonce: string
  nonce_signed: string
  /** The journal's newest durable record and chain head, signed now by the log key. */
  head: SignedHead
}

export type UpgradeKind = 'fw' | 'ui'

export type CheckState = 'started' | 'running' | 'verified'

/** `GET /api/system/checkin`: base64url JSON `{devid, nonce, iat}` "." base64url Ed25519 signature by the log key. */
export interface Checkin {
  check: string
}

/** What the device does on its backend's reply: nothing (`OK`), or locks or shuts itself down. */
export interface CheckinResult {
  status: 'OK' | 'LOCKED' | 'SHUTDOWN'
}
