// What the device answers, as the client library hands it over.

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

export interface Selftest {
  last_selftest_ts: number
  fls_state: number
  kat_busy: boolean
  se_state: number
}

export interface KeySpec {
  label: string
  /** AES128, AES256, CURVE25519, ED25519, SECP256R1, SHA2-256, ... */
  type: string
  /** ECDH (default), ExDSA or `ECDH,ExDSA`, for the SECP curves. */
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

export interface LogKey {
  key: string
  nonce: string
  nonce_signed: string
}

export type UpgradeKind = 'fw' | 'ui'

export type CheckState = 'started' | 'running' | 'verified'
