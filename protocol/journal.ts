// The journal's vocabulary: record types, results, and what a writer and a verifier promise.

/** LOG_TYPE numbers of the device family (device-contract §4), plus hemd's extensions from 0x80. */
export const LogType = {
  KEY_INIT: 0,
  STARTUP: 1,
  REBOOT: 2,
  SHUTDOWN: 3,
  UPGRADE: 4,
  TRNG_FAILED: 5,
  TLS_ERROR: 6,
  SELFTEST_PASSED: 7,
  NON_SECURE_STATE: 8,
  LOGGER_LIST_LOG: 9,
  LOGGER_DELETE_LOG: 10,
  LOGGER_READ_LOG: 11,
  FAILED_SCOPE_CHECK: 12,
  AUTH_SUCCESS_INTERNAL: 13,
  AUTH_SUCCESS_EXTERNAL: 14,
  AUTH_PAIRED_EXTERNAL: 15,
  CONFIG_UPDATED: 18,
  RTC_SET: 19,
  KEY_GENERATION: 20,
  KEY_DELETE: 21,
  KEY_IMPORT: 22,
  KEY_USAGE_PKEY: 23,
  KEY_INTEGRITY_ERROR: 24,
  KEY_ATTRIBUTES_CHANGED: 25,
  KEY_DERIVE: 26,
  DEVICE_INITED: 29,
  CRYPTO_HMAC_HASH: 30,
  CRYPTO_HMAC_VERIFY: 31,
  CRYPTO_EXDSA_SIGN: 32,
  CRYPTO_EXDSA_VERIFY: 33,
  CRYPTO_WRAP: 34,
  CRYPTO_UNWRAP: 35,
  CRYPTO_ENCRYPT: 36,
  CRYPTO_DECRYPT: 37,
  CRYPTO_ECDH: 38,
  CRYPTO_MLKEM_ENCAPS: 39,
  CRYPTO_MLKEM_DECAPS: 40,
  CRYPTO_MLDSA_SIGN: 41,
  CRYPTO_MLDSA_VERIFY: 42,
  /** Extension: second record of every file, links it to the previous file's last chain head. */
  LINK: 0x80,
  /** Extension: Ed25519 signature over the chain head (periodic, at close, after recovery). */
  SEAL: 0x81,
  /** Extension: a machine transition `{machine, version, from, to, event}`. */
  TRANSITION: 0x82,
  /** Extension: a format of the disks (P) started, finished, failed, was cancelled or was found cut short. */
  DISK_FORMAT: 0x83,
  /** Extension: a wipeout's erasure of the enclave's owner material and the disks, failed or finished at boot. */
  WIPEOUT_ERASE: 0x84,
  /** Extension: a backup file made (docs/backup.md): its SHA-256, the journal head it covers, its key count. */
  BACKUP: 0x85,
  /** Extension: a restore onto this device from a backup, or a restore refused (docs/backup.md). */
  RESTORE: 0x86,
  /** Extension: the keys a restore brought, by KID, in the same append as its RESTORE record. */
  RESTORE_KEYS: 0x87,
  /** Extension: the backup passphrase set or replaced (never its value, nor the key derived from it). */
  BACKUP_PASSPHRASE: 0x88,
} as const
export type LogTypeNumber = (typeof LogType)[keyof typeof LogType]

export const LogResult = { OK: 0, FAILED: 1, ERROR: 2 } as const
export type LogResultNumber = (typeof LogResult)[keyof typeof LogResult]

/** What a caller asks the journal to record. `data` is msgpack-encoded (no records) and base64url'd. */
export interface JournalEntry {
  type: number
  result: LogResultNumber
  /** `U`, `M`, an ExtAuth id, or empty. Must not contain `|` or a newline. */
  subject?: string
  data?: Record<string, unknown>
}

/** Where an appended entry landed. */
export interface JournalPosition {
  file: string
  seq: number
}

export interface TransitionData {
  machine: string
  /** Present where a machine runs more than once, e.g. `0` and `1` for the disks. */
  instance?: string
  version: number
  from: string
  to: string
  event: string
}

export type SealReason = 'periodic' | 'close' | 'recovered' | 'rotate'

/** What the writer found and did at open. */
export interface RecoveryReport {
  /** Id of the previous segment, if any. */
  previous: string | undefined
  /** Bytes cut from the previous segment's torn tail. */
  cutBytes: number
  /** True when the previous segment had no close seal and was sealed as recovered. */
  sealedRecovered: boolean
  /** False when the previous segment's chain or MACs do not verify (fls bit 0x08). */
  intact: boolean
  /** Human-readable findings, never containing secrets. */
  problems: string[]
  /** The unsigned anchor of an older build that this boot (an upgrade's trial) re-wrote signed. */
  anchorMigrated?: { file: string; seq: number }
}

/** One finding of the verifier, pointing at the first bad place. */
export interface VerifyProblem {
  file: string
  /** Record sequence number (or line number for unparsable lines, as `line`). */
  seq?: number
  line?: number
  message: string
}

export interface VerifySummary {
  files: number
  records: number
  seals: number
  firstTime: number | undefined
  lastTime: number | undefined
  /** Set when `allowOpenTail` let the last file end without a close/rotate/recovered seal. */
  openTail?: OpenTail
}

export interface VerifyResult {
  ok: boolean
  problems: VerifyProblem[]
  summary: VerifySummary
}

/** Data of the LINK record (record 1 of every file). All null in the very first file. */
export interface LinkData {
  prev: string | null
  /** Final chain head of the previous file (or the last head that verified, after a broken file). */
  head: Uint8Array | null
  /** Seq of the previous file's last record covered by `head`. */
  seq: number | null
}

/** Data of a SEAL record. `sig` is Ed25519 over "hemd.seal.v1" || fileId || u32be(seq) || head. */
export interface SealData {
  head: Uint8Array
  sig: Uint8Array
  reason: SealReason
}

/**
 * The journal's head, signed by the log key: the newest durable record (`file`, `seq`) and the chain
 * head after its line. `sig` is Ed25519 over "hemd.head.v1" || file || u32be(seq) || head. Covers every
 * record up to it as a seal does, so a cut end or a forged tail shows against it.
 */
export interface SignedHead {
  file: string
  seq: number
  /** Standard padded base64 of the 32-byte chain head. */
  head: string
  /** Standard padded base64 of the 64-byte signature. */
  sig: string
}

/** The seven fields of a record line, as stored. */
export interface RecordLine {
  seq: number
  time: number
  type: number
  result: LogResultNumber
  subject: string
  /** The data field as stored: base64url text, or empty. */
  data: string
  /** The MAC field as stored. */
  mac: string
  /** The line text up to and including the last `|`: what the MAC covers. */
  signed: string
}

/** One line of a segment file, as a reader sees it. `line` is 1-based. */
export type JournalLine =
  | { kind: 'comment'; line: number; bytes: Uint8Array; text: string }
  | { kind: 'record'; line: number; bytes: Uint8Array; record: RecordLine }
  | { kind: 'invalid'; line: number; bytes: Uint8Array; error: string }

/** The unsealed end of the newest file, reported (not a problem) when open tails are allowed. */
export interface OpenTail {
  file: string
  /** Records after the file's last seal. */
  records: number
}

export interface ClientCheckResult {
  ok: boolean
  /** `line N: what is wrong`. */
  problems: string[]
}

export interface JournalFile {
  id: string
  bytes: Uint8Array
}
