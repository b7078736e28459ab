import type { KeyMode, KeyType } from './key-types.js'

/** One key as the key repository stores it (sealed) and the keystore actor holds it (in memory). */
export interface KeyRecord {
  /** 32 lowercase hex chars. */
  kid: string
  type: KeyType
  /** SECP* keys only. */
  mode?: KeyMode
  label: string
  /** At most 64 bytes. */
  descr?: Uint8Array
  /** Unix seconds. */
  created: number
  updated: number
  /**
   * The AES or HMAC key, or the private scalar (ECDH, SECP*) or seed (Ed25519/Ed448) of a
   * generated asymmetric key; absent for an imported public key.
   */
  secret?: Uint8Array
  /** Raw for X25519/X448/Ed*, compressed SEC1 for SECP*; absent for AES and HMAC keys. */
  publicKey?: Uint8Array
}

/** `repo_stats` in status, spelled as the seed spells it. */
export interface RepoStats {
  /** Slots in use: live keys, deleted and invalid slots. */
  total: number
  deleted: number
  /** Slots whose seal or contents did not check, at boot or at a self-test since. */
  invalid: number
  freeespace: number
  /** Percent of used slots that are deleted, rounded down. */
  fragmentation: number
}

/** The keystore actor's read model, published on `hem.<devid>.evt.keystore.state`. */
export interface KeystoreState {
  /** Fail-state bits the keystore raises: 0x01 KAT failure of the engine in use, 0x08 repository integrity. */
  fls: number
  /** `native` or `noble`: the crypto engine chosen at boot. */
  engine: string
  /** The engine's failed KATs at boot (with fls 0x01), for the health machine's record. */
  kat_failed?: string[]
  repo_stats: RepoStats
  /** The identity's `inited` the repository last followed: false once a wipeout has erased it. */
  inited?: boolean
}
