// The backup file's plain header (docs/backup.md): what a client shows before a restore, and what
// the device checks before it spends a KDF run. Big-endian numbers; every length is checked, and the
// header is the AAD of the AES-256-GCM ciphertext that follows it, so no byte of it can change.
//
//   magic 'HEMBACKUP' 0x00 (10) | version u16 | kdf u8 (1 scrypt) | log2N u8 | r u16 | p u16
//   | salt length u8 | salt | nonce (12) | devid (8) | log key (32) | head file length u8 | head file
//   | head seq u32 | chain head (32) | created u64 | key count u32 | ciphertext length u32
//   then the ciphertext (ciphertext length bytes, the GCM tag its last 16) and nothing after it.

export const BACKUP_MAGIC = Uint8Array.from([0x48, 0x45, 0x4d, 0x42, 0x41, 0x43, 0x4b, 0x55, 0x50, 0x00])
/** The only format version this runtime writes and reads. */
export const BACKUP_FORMAT_VERSION = 1
export const BACKUP_KDF_SCRYPT = 1
export const BACKUP_NONCE_BYTES = 12
export const BACKUP_TAG_BYTES = 16
/** The largest backup file the device stages: 1 024 keys of the largest kind (ML-DSA-87) take about 3 MiB. */
export const MAX_BACKUP_BYTES = 8 * 1024 * 1024

/** scrypt's parameters as the header holds them. */
export interface ScryptParams {
  log2N: number
  r: number
  p: number
}

/** What a new backup passphrase is derived with: 128 MiB and about a second of work on the device. */
export const DEFAULT_SCRYPT: Readonly<ScryptParams> = { log2N: 17, r: 8, p: 1 }

/**
 * The most a file may make the device spend: 256 MiB of memory (128·N·r bytes) and four times the default's work
 * (N·r·p). A file asking more is refused before any KDF runs, so a crafted file cannot exhaust a fresh device.
 */
export const SCRYPT_LIMITS = { maxMemory: 256 * 1024 * 1024, maxWork: 4 * 2 ** 17 * 8, minLog2N: 14 } as const

export interface BackupHead {
  file: string
  seq: number
  /** The 32-byte chain head after record `seq`. */
  chain: Uint8Array
}

export interface BackupHeader {
  version: number
  kdf: ScryptParams
  salt: Uint8Array
  nonce: Uint8Array
  /** The source device: its id (16 hex), its log public key (32 bytes) and the journal head the backup covers. */
  devid: string
  logKey: Uint8Array
  head: BackupHead
  /** Unix seconds, by the source's clock. */
  created: number
  keys: number
}

/** A file that is not a backup this runtime reads: `unsupported_backup` for another version, else `bad_backup`. */
export class BackupFormatError extends Error {
  override readonly name = 'BackupFormatError'
  constructor(
    readonly code: 'bad_backup' | 'unsupported_backup',
    message: string,
  ) {
    super(message)
  }
}

const FILE_ID = /^[0-9a-f]{8}$/
const DEVID = /^[0-9a-f]{16}$/
const FIXED = BACKUP_MAGIC.length + 2 + 1 + 1 + 2 + 2 + 1

/** Why scrypt parameters are refused, or undefined when the device may run them. */
export function scryptProblem({ log2N, r, p }: ScryptParams): string | undefined {
  if (![log2N, r, p].every((n) => Number.isSafeInteger(n) && n >= 1)) return 'scrypt parameters must be whole numbers'
  if (log2N < SCRYPT_LIMITS.minLog2N || log2N > 30) return `scrypt log2N must be ${SCRYPT_LIMITS.minLog2N} to 30`
  if (128 * 2 ** log2N * r > SCRYPT_LIMITS.maxMemory) return 'scrypt parameters ask more memory than the device gives'
  if (2 ** log2N * r * p > SCRYPT_LIMITS.maxWork) return 'scrypt parameters ask more work than the device gives'
  return undefined
}

/** The header's bytes, up to and including the ciphertext length: the AAD of the ciphertext. */
export function encodeBackupHeader(header: BackupHeader, ciphertextLength: number): Uint8Array {
  const problem = scryptProblem(header.kdf) ?? headerProblem(header)
  if (problem) throw new RangeError(problem)
  const file = new TextEncoder().encode(header.head.file)
  const out = new Uint8Array(
    FIXED + header.salt.length + BACKUP_NONCE_BYTES + 8 + 32 + 1 + file.length + 4 + 32 + 8 + 4 + 4,
  )
  const view = new DataView(out.buffer)
  let at = 0
  const put = (bytes: Uint8Array) => {
    out.set(bytes, at)
    at += bytes.length
  }
  put(BACKUP_MAGIC)
  view.setUint16(at, header.version)
  out.set([BACKUP_KDF_SCRYPT, header.kdf.log2N], at + 2)
  view.setUint16(at + 4, header.kdf.r)
  view.setUint16(at + 6, header.kdf.p)
  out[at + 8] = header.salt.length
  at += 9
  put(header.salt)
  put(header.nonce)
  put(hexBytes(header.devid))
  put(header.logKey)
  out[at++] = file.length
  put(file)
  view.setUint32(at, header.head.seq)
  at += 4
  put(header.head.chain)
  view.setBigUint64(at, BigInt(header.created))
  view.setUint32(at + 8, header.keys)
  view.setUint32(at + 12, ciphertextLength)
  return out
}

function headerProblem(h: BackupHeader): string | undefined {
  if (h.version !== BACKUP_FORMAT_VERSION) return 'unknown format version'
  if (h.salt.length < 16 || h.salt.length > 64) return 'the salt must be 16 to 64 bytes'
  if (h.nonce.length !== BACKUP_NONCE_BYTES) return 'the nonce must be 12 bytes'
  if (!DEVID.test(h.devid)) return 'the devid must be 16 lowercase hex characters'
  if (h.logKey.length !== 32 || h.head.chain.length !== 32) return 'the log key and chain head must be 32 bytes'
  if (!FILE_ID.test(h.head.file)) return 'the head file must be 8 lowercase hex characters'
  if (!u32(h.head.seq) || !u32(h.keys)) return 'the head seq and key count must be 32-bit whole numbers'
  if (!Number.isSafeInteger(h.created) || h.created < 0) return 'the creation time must be Unix seconds'
  return undefined
}

/** A parsed file: its header, the AAD (the header's bytes) and the ciphertext with its tag. */
export interface BackupFileParts {
  header: BackupHeader
  aad: Uint8Array
  ciphertext: Uint8Array
}

/**
 * Reads a backup file's header and splits the file, strictly: a wrong magic, a length that runs past the end, a
 * byte after the ciphertext or refused scrypt parameters throw BackupFormatError `bad_backup`, another format
 * version `unsupported_backup`.
 */
export function parseBackupFile(bytes: Uint8Array): BackupFileParts {
  const reader = new Reader(bytes)
  const magic = reader.take(BACKUP_MAGIC.length)
  if (!magic.every((b, i) => b === BACKUP_MAGIC[i])) throw bad('this is not a hemd backup file')
  const version = reader.u16()
  if (version !== BACKUP_FORMAT_VERSION)
    throw new BackupFormatError(
      'unsupported_backup',
      `backup format version ${version} is not supported (this device reads ${BACKUP_FORMAT_VERSION})`,
    )
  if (reader.u8() !== BACKUP_KDF_SCRYPT) throw new BackupFormatError('unsupported_backup', 'unknown KDF')
  const kdf = { log2N: reader.u8(), r: reader.u16(), p: reader.u16() }
  const kdfProblem = scryptProblem(kdf)
  if (kdfProblem) throw bad(kdfProblem)
  const salt = reader.take(reader.u8())
  const nonce = reader.take(BACKUP_NONCE_BYTES)
  const devid = Array.from(reader.take(8), (b) => b.toString(16).padStart(2, '0')).join('')
  const logKey = reader.take(32)
  const file = new TextDecoder('utf-8', { fatal: false }).decode(reader.take(reader.u8()))
  const head = { file, seq: reader.u32(), chain: reader.take(32) }
  const created = reader.u64()
  const keys = reader.u32()
  const length = reader.u32()
  const aad = bytes.subarray(0, reader.at)
  if (length < BACKUP_TAG_BYTES) throw bad('the ciphertext is shorter than its tag')
  const ciphertext = reader.take(length)
  if (reader.at !== bytes.length) throw bad('bytes follow the ciphertext')
  const header: BackupHeader = { version, kdf, salt, nonce, devid, logKey, head, created, keys }
  const problem = headerProblem(header)
  if (problem) throw bad(problem)
  return { header, aad, ciphertext }
}

/** The header of a backup file, as a client shows it before a restore (see parseBackupFile). */
export function readBackupHeader(bytes: Uint8Array): BackupHeader {
  return parseBackupFile(bytes).header
}

class Reader {
  at = 0
  readonly #view: DataView
  constructor(private readonly bytes: Uint8Array) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw bad('the file is cut short')
    const part = this.bytes.subarray(this.at, this.at + n)
    this.at += n
    return part
  }

  u8(): number {
    return this.take(1)[0]!
  }

  u16(): number {
    this.take(2)
    return this.#view.getUint16(this.at - 2)
  }

  u32(): number {
    this.take(4)
    return this.#view.getUint32(this.at - 4)
  }

  u64(): number {
    this.take(8)
    const value = this.#view.getBigUint64(this.at - 8)
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw bad('the creation time is out of range')
    return Number(value)
  }
}

const bad = (message: string) => new BackupFormatError('bad_backup', message)
const u32 = (n: number) => Number.isSafeInteger(n) && n >= 0 && n <= 0xffffffff

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16))
}
