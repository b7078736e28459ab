// Sealing and opening a backup file (docs/backup.md): the header of protocol/backup-format.ts as AAD,
// then AES-256-GCM of a msgpack payload under the key scrypt derived from the backup passphrase.

import { createCipheriv, createDecipheriv } from 'node:crypto'
import { scryptAsync } from '@noble/hashes/scrypt.js'
import { Packr } from 'msgpackr'
import {
  BACKUP_FORMAT_VERSION,
  BACKUP_TAG_BYTES,
  type BackupHeader,
  BackupFormatError,
  encodeBackupHeader,
  type KeyRecord,
  parseBackupFile,
  publicKeyKid,
  type ScryptParams,
  scryptProblem,
} from '../../protocol/index.js'
import { decodeKeyRecord, encodeKeyRecord } from './key-record-codec.js'

const packr = new Packr({ useRecords: false })
const PAYLOAD_FIELDS = ['cfg', 'login', 'keys'] as const

/** What a backup carries besides its header: the configuration, the login public keys and every key record. */
export interface BackupPayload {
  /** The configuration's plain fields, as personalisation takes them. */
  cfg: Record<string, unknown>
  /** The login public keys, and the eid (base64) they were derived under. */
  login: { user: Uint8Array; master: Uint8Array; salt: string }
  keys: KeyRecord[]
}

/** scrypt of the passphrase (NFC, UTF-8): 32 bytes. Async, so that the event loop keeps turning. */
export async function deriveBackupKey(passphrase: string, salt: Uint8Array, kdf: ScryptParams): Promise<Uint8Array> {
  const problem = scryptProblem(kdf)
  if (problem) throw new BackupFormatError('bad_backup', problem)
  const secret = new TextEncoder().encode(passphrase.normalize('NFC'))
  try {
    return await scryptAsync(secret, salt, {
      N: 2 ** kdf.log2N,
      r: kdf.r,
      p: kdf.p,
      dkLen: 32,
      maxmem: 128 * 2 ** kdf.log2N * kdf.r + 1024 * 1024,
      asyncTick: 10,
    })
  } finally {
    secret.fill(0)
  }
}

/** The file: `header` (its key count set from the payload) and the sealed payload. */
export function sealBackup(
  key: Uint8Array,
  header: Omit<BackupHeader, 'version' | 'keys'>,
  payload: BackupPayload,
): Uint8Array {
  const records = payload.keys.map((record) => encodeKeyRecord(record))
  const plaintext = Uint8Array.from(packr.pack({ cfg: payload.cfg, login: payload.login, keys: records }))
  try {
    const head = encodeBackupHeader(
      { ...header, version: BACKUP_FORMAT_VERSION, keys: payload.keys.length },
      plaintext.length + BACKUP_TAG_BYTES,
    )
    const cipher = createCipheriv('aes-256-gcm', key, header.nonce)
    cipher.setAAD(head)
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
    const file = new Uint8Array(head.length + sealed.length)
    file.set(head)
    file.set(sealed, head.length)
    return file
  } finally {
    plaintext.fill(0)
    for (const record of records) record.fill(0)
  }
}

/**
 * The header and the payload of a file, each key record checked as the repository checks what it reads, and each
 * asymmetric key's KID against its public key. BackupFormatError: `bad_backup` for a wrong key or any altered byte
 * (one answer for both), `unsupported_backup` for another format version.
 */
export function openBackup(
  bytes: Uint8Array,
  key: (header: BackupHeader) => Uint8Array,
): { header: BackupHeader; payload: BackupPayload } {
  const { header, aad, ciphertext } = parseBackupFile(bytes)
  const plaintext = gcmOpen(key(header), header.nonce, aad, ciphertext)
  try {
    return { header, payload: decodePayload(plaintext, header.keys) }
  } finally {
    plaintext.fill(0)
  }
}

function gcmOpen(key: Uint8Array, nonce: Uint8Array, aad: Uint8Array, sealed: Uint8Array): Uint8Array {
  const body = sealed.subarray(0, sealed.length - BACKUP_TAG_BYTES)
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce)
    decipher.setAAD(aad)
    decipher.setAuthTag(sealed.subarray(body.length))
    return Buffer.concat([decipher.update(body), decipher.final()])
  } catch {
    throw new BackupFormatError('bad_backup', 'the backup does not open: a wrong passphrase, or an altered file')
  }
}

function decodePayload(plaintext: Uint8Array, count: number): BackupPayload {
  let value: unknown
  try {
    value = packr.unpack(plaintext)
  } catch {
    // msgpackr's messages can quote what it read, and that is key material: no cause.
    throw invalid('the payload is not one MessagePack value')
  }
  if (!isMap(value) || Object.keys(value).some((k) => !PAYLOAD_FIELDS.includes(k as never)))
    throw invalid('the payload is not a map of cfg, login and keys')
  const { cfg, login, keys } = value
  if (!isMap(cfg) || !isMap(login) || !Array.isArray(keys)) throw invalid('the payload misses cfg, login or keys')
  const { user, master, salt } = login
  if (!isKey32(user) || !isKey32(master) || typeof salt !== 'string' || Object.keys(login).length !== 3)
    throw invalid('the login keys must be two 32-byte public keys and their salt')
  if (keys.length !== count) throw invalid(`the header says ${count} keys, the payload holds ${keys.length}`)
  const records = keys.map((bytes) => record(bytes))
  if (new Set(records.map((r) => r.kid)).size !== records.length) throw invalid('two keys have the same KID')
  const keysOf = { user: Uint8Array.from(user), master: Uint8Array.from(master), salt }
  return { cfg, login: keysOf, keys: records }
}

function record(bytes: unknown): KeyRecord {
  if (!(bytes instanceof Uint8Array)) throw invalid('a key record is not bytes')
  let decoded: KeyRecord
  try {
    decoded = decodeKeyRecord(bytes)
  } catch (err) {
    throw invalid(`a key record does not decode: ${(err as Error).message}`)
  }
  if (decoded.publicKey && publicKeyKid(decoded.publicKey) !== decoded.kid)
    throw invalid(`key ${decoded.kid}: its KID is not that of its public key`)
  return decoded
}

const invalid = (message: string) => new BackupFormatError('bad_backup', message)
const isKey32 = (value: unknown): value is Uint8Array => value instanceof Uint8Array && value.length === 32

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
}
