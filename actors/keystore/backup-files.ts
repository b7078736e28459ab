import { createHash } from 'node:crypto'
import {
  type CommandReply,
  type CommandRequest,
  decodeBase64,
  fail,
  type JournalEntry,
  LogResult,
  LogType,
  type SignedHead,
} from '../../protocol/index.js'
import { journalSubject } from '../host/index.js'
import { BackupKeyStore, type BackupKey } from './backup-key.js'
import { sealBackup, type BackupPayload } from './backup-seal.js'
import type { KeystoreContext } from './keystore-context.js'

/** Bytes of the file per bus message (nats-server's max_payload is 1 MiB). */
export const BACKUP_CHUNK = 256 * 1024
/** A backup whose download went quiet this long no longer holds others off. */
const STALE_MS = 120_000
const PASSPHRASE_BYTES = { min: 12, max: 1024 } as const

export interface BackupFilesOptions {
  actor: KeystoreContext
  keys: BackupKeyStore
  devid: string
  /** The log public key, bound into every file. */
  logKey: Uint8Array
  head(): Promise<SignedHead>
  /** Milliseconds, by the device clock. */
  clock(): number
}

interface Served {
  rid: string
  bytes: Uint8Array
  touched: number
}

/**
 * The backup passphrase and the backups made under it (docs/backup.md): `backup_passphrase` derives and stores the
 * key, `backup_create` (the auth service's, with the configuration and login keys) seals the key store into a file and
 * journals BACKUP before it hands out the first chunk; `backup_chunk` serves the rest of that same file. One backup
 * is served at a time, and only to the request (rid) that made it.
 */
export class BackupFiles {
  #served: Served | undefined

  constructor(private readonly o: BackupFilesOptions) {}

  /** `{passphrase}`: 12..1024 UTF-8 bytes after NFC. The key is derived first (seconds), journaled, then stored. */
  async setPassphrase(req: CommandRequest): Promise<CommandReply> {
    const { actor } = this.o
    const unavailable = actor.unavailable()
    if (unavailable) return unavailable
    const passphrase = (req.body as { passphrase?: unknown } | undefined)?.passphrase
    if (typeof passphrase !== 'string') return fail(400, 'bad_request', '`passphrase` must be a string')
    const length = new TextEncoder().encode(passphrase.normalize('NFC')).length
    if (length > PASSPHRASE_BYTES.max) return fail(400, 'bad_request', 'The passphrase is longer than 1024 bytes')
    if (length < PASSPHRASE_BYTES.min)
      return fail(400, 'weak_passphrase', `A backup passphrase has at least ${PASSPHRASE_BYTES.min} bytes`)
    const derived = await BackupKeyStore.derive(passphrase, actor.random)
    const entry = (result: JournalEntry['result'], source: number): JournalEntry => ({
      type: LogType.BACKUP_PASSPHRASE,
      result,
      ...journalSubject(req.principal),
      data: { source, rid: req.rid },
    })
    await actor.journal([entry(LogResult.OK, 200)])
    try {
      await this.o.keys.store(derived)
    } catch (err) {
      actor.logger.error({ err: (err as Error).message }, 'the backup key could not be stored')
      await actor.journal([entry(LogResult.ERROR, 500)]).catch(() => undefined)
      return fail(500, 'storage_error', 'The backup passphrase could not be stored')
    } finally {
      derived.key.fill(0)
    }
    return { status: 200, body: {} }
  }

  /** `{cfg, user, master}` from the auth service: 200 `{size, data, filename}`, the first chunk of a new file. */
  async create(req: CommandRequest): Promise<CommandReply> {
    const { actor } = this.o
    const unavailable = actor.unavailable()
    if (unavailable) return unavailable
    const body = (req.body ?? {}) as { cfg?: unknown; user?: unknown; master?: unknown; salt?: unknown }
    const { cfg, user, master, salt } = body
    if (!isMap(cfg) || !(user instanceof Uint8Array) || !(master instanceof Uint8Array) || typeof salt !== 'string')
      return fail(400, 'bad_request', 'A backup needs the configuration and the login keys')
    const now = this.o.clock()
    const served = this.#served
    if (served && served.rid !== req.rid && now - served.touched < STALE_MS)
      return fail(409, 'busy', 'Another backup is being downloaded; try again once it is done')
    const key = await this.o.keys.read()
    if (!key) return fail(409, 'no_backup_passphrase', 'Set a backup passphrase first')
    const payload: BackupPayload = {
      cfg,
      login: { user, master, salt },
      keys: actor.repository.keys().filter((record) => actor.keys.serves(record.kid)),
    }
    const { bytes, head } = await this.#seal(key, payload, now)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    await actor.journal([
      {
        type: LogType.BACKUP,
        result: LogResult.OK,
        ...journalSubject(req.principal),
        data: { source: 200, rid: req.rid, sha256, head, keys: payload.keys.length },
      },
    ])
    // A file that fits in the first chunk is served whole by this answer: nothing is held for later chunks.
    this.#served = bytes.length > BACKUP_CHUNK ? { rid: req.rid, bytes, touched: now } : undefined
    const filename = `hem-${this.o.devid}-${Math.floor(now / 1000)}.hembackup`
    return {
      status: 200,
      contentType: 'application/octet-stream',
      body: { size: bytes.length, data: bytes.subarray(0, BACKUP_CHUNK), filename },
    }
  }

  /** `{offset, end}` of the file this request's `create` made. */
  chunk(req: CommandRequest): CommandReply {
    const served = this.#served
    const { offset, end } = (req.body ?? {}) as { offset?: unknown; end?: unknown }
    if (!served || served.rid !== req.rid) return fail(404, 'not_found', 'No backup is being served to this request')
    if (
      !Number.isSafeInteger(offset) ||
      end !== served.bytes.length ||
      (offset as number) < 0 ||
      (offset as number) >= served.bytes.length
    )
      return fail(400, 'bad_request', 'The chunk lies outside the backup')
    const at = offset as number
    const data = served.bytes.subarray(at, Math.min(at + BACKUP_CHUNK, served.bytes.length))
    served.touched = this.o.clock()
    // Served whole: the next backup may start.
    if (at + data.length === served.bytes.length) this.#served = undefined
    return { status: 200, body: { data } }
  }

  async #seal(
    backupKey: BackupKey,
    payload: BackupPayload,
    now: number,
  ): Promise<{ bytes: Uint8Array; head: Record<string, unknown> }> {
    const signed = await this.o.head()
    const chain = decodeBase64(signed.head)
    if (chain?.length !== 32) throw new Error('the journal head is not a 32-byte chain head')
    const { kdf, salt, key } = backupKey
    try {
      const bytes = sealBackup(
        key,
        {
          kdf,
          salt,
          nonce: this.o.actor.random(12),
          devid: this.o.devid,
          logKey: this.o.logKey,
          head: { file: signed.file, seq: signed.seq, chain },
          created: Math.floor(now / 1000),
        },
        payload,
      )
      return { bytes, head: { file: signed.file, seq: signed.seq, chain: Buffer.from(chain).toString('hex') } }
    } finally {
      key.fill(0)
    }
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
}
