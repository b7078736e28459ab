import { createHash } from 'node:crypto'
import {
  BackupFormatError,
  type CommandReply,
  type CommandRequest,
  encodeBase64,
  fail,
  type IdentityState,
  LogResult,
  LogType,
  MAX_BACKUP_BYTES,
  parseBackupFile,
  type RestoredKeyRow,
} from '../../protocol/index.js'
import { deriveBackupKey, openBackup } from './backup-seal.js'
import type { KeystoreContext } from './keystore-context.js'

/** Failed opens of a boot that go unpaced; each one after waits this long after the last (docs/backup.md). */
export const RESTORE_FREE_ATTEMPTS = 3
export const RESTORE_PACE_MS = 30_000
const SAME_ANSWER = 'The backup does not open: a wrong passphrase, or an altered file'

export interface RestoreStageOptions {
  actor: KeystoreContext
  /** Milliseconds, by the device clock. */
  clock(): number
  /** Erases the repository and forgets its keys, as a wipeout does. */
  wipe(): Promise<void>
}

interface Upload {
  id: string
  bytes: Uint8Array
  written: number
}

/**
 * A restore's key-store half (docs/backup.md), on a fresh device only: the file is uploaded into memory (bounded by
 * MAX_BACKUP_BYTES, a new upload replaces it), then `restore_open` (the auth service's) derives the key with the
 * file's parameters, opens and checks it, and writes every key into the repository before the auth service journals
 * the restore; `restore_abort` erases them again when that fails. Keys written for a restore that no owner followed
 * (the auth service restarted before it journaled) are erased as soon as that is seen.
 */
export class RestoreStage {
  #upload: Upload | undefined
  #staged: { bytes: Uint8Array; sha256: string } | undefined
  #count = 0
  #failures = 0
  #lastFailure = 0
  #opening = false
  /** The token key of the auth incarnation a restore wrote keys for, until the device is personalised. */
  #pending: string | undefined

  constructor(private readonly o: RestoreStageOptions) {}

  uploadBegin(req: CommandRequest): CommandReply {
    const refused = this.#notFresh()
    if (refused) return refused
    const size = (req.body as { size?: unknown } | undefined)?.size
    if (!Number.isSafeInteger(size) || (size as number) < 1)
      return fail(400, 'bad_request', 'The upload size is missing')
    if ((size as number) > MAX_BACKUP_BYTES)
      return fail(413, 'payload_too_large', `A backup file is at most ${MAX_BACKUP_BYTES} bytes`)
    this.#upload = { id: `backup-${++this.#count}`, bytes: new Uint8Array(size as number), written: 0 }
    return { status: 200, body: { upload: this.#upload.id } }
  }

  uploadChunk(req: CommandRequest): CommandReply {
    const upload = this.#byId(req)
    if (!upload) return fail(404, 'no_upload', 'No such upload is running')
    const { offset, data } = (req.body ?? {}) as { offset?: unknown; data?: unknown }
    if (
      !(data instanceof Uint8Array) ||
      offset !== upload.written ||
      upload.written + data.length > upload.bytes.length
    ) {
      this.#upload = undefined
      return fail(400, 'bad_chunk', 'The chunk does not continue the upload')
    }
    upload.bytes.set(data, upload.written)
    upload.written += data.length
    return { status: 200 }
  }

  uploadEnd(req: CommandRequest): CommandReply {
    const upload = this.#byId(req)
    if (!upload) return fail(404, 'no_upload', 'No such upload is running')
    this.#upload = undefined
    if (upload.written !== upload.bytes.length)
      return fail(406, 'incomplete', `The upload ended after ${upload.written} of ${upload.bytes.length} bytes`)
    const sha256 = createHash('sha256').update(upload.bytes).digest('hex')
    this.#staged = { bytes: upload.bytes, sha256 }
    return { status: 200, body: { size: upload.bytes.length, sha256 } }
  }

  uploadAbort(req: CommandRequest): CommandReply {
    if (this.#byId(req)) this.#upload = undefined
    return { status: 200 }
  }

  /** `{passphrase}`: 200 with what the auth service journals and applies; the keys are in the repository by then. */
  async open(req: CommandRequest): Promise<CommandReply> {
    const refused = this.#notFresh()
    if (refused) return refused
    const { actor } = this.o
    const staged = this.#staged
    if (!staged) return this.#refuse(req, 409, 'nothing_staged', 'No backup file is uploaded', undefined)
    const now = this.o.clock()
    const wait = this.#failures >= RESTORE_FREE_ATTEMPTS ? this.#lastFailure + RESTORE_PACE_MS - now : 0
    if (wait > 0)
      return { ...fail(429, 'too_many_attempts', 'Too many failed restores; wait'), retryAfter: Math.ceil(wait / 1000) }
    const passphrase = (req.body as { passphrase?: unknown } | undefined)?.passphrase
    if (typeof passphrase !== 'string' || passphrase.length > 4096)
      return fail(400, 'bad_request', '`passphrase` must be a string')
    if (actor.repository.stats().total > 0)
      return fail(409, 'reboot_pending', 'The key store still holds keys; reboot the device first')
    // Two opens at once would both write their keys, and the one that failed would erase the other's.
    if (this.#opening) return fail(409, 'busy', 'A restore is being opened; try again once it is done')
    this.#opening = true
    try {
      return await this.#openStaged(req, staged, passphrase)
    } finally {
      this.#opening = false
    }
  }

  async #openStaged(
    req: CommandRequest,
    staged: { bytes: Uint8Array; sha256: string },
    passphrase: string,
  ): Promise<CommandReply> {
    let opened: ReturnType<typeof openBackup>
    try {
      const { header } = parseBackupFile(staged.bytes)
      const key = await deriveBackupKey(passphrase, header.salt, header.kdf)
      try {
        opened = openBackup(staged.bytes, () => key)
      } finally {
        key.fill(0)
      }
    } catch (err) {
      if (!(err instanceof BackupFormatError)) throw err
      if (err.code === 'bad_backup') {
        this.#failures += 1
        this.#lastFailure = this.o.clock()
      }
      return this.#refuse(req, 406, err.code, err.code === 'bad_backup' ? SAME_ANSWER : err.message, staged.sha256)
    }
    return this.#write(req, opened, staged.sha256)
  }

  /** `restore_abort`: the auth service could not journal the restore: the keys go again. */
  async abort(): Promise<CommandReply> {
    this.#pending = undefined
    await this.o.wipe()
    return { status: 200 }
  }

  /** Whether the keys of a restore must go: the auth incarnation that was to journal it is gone, no owner journaled. */
  orphaned(identity: IdentityState): boolean {
    if (this.#pending === undefined) return false
    if (identity.inited) this.#pending = undefined
    else if (identity.token_key !== this.#pending) {
      this.#pending = undefined
      return true
    }
    return false
  }

  async #write(req: CommandRequest, opened: ReturnType<typeof openBackup>, sha256: string): Promise<CommandReply> {
    const { actor } = this.o
    const { header, payload } = opened
    this.#pending = actor.identityState?.token_key
    try {
      for (const record of payload.keys) await actor.repository.add(record)
    } catch (err) {
      this.#pending = undefined
      await this.o.wipe().catch(() => undefined)
      actor.logger.error({ err: (err as Error).message }, 'the restored keys could not be stored')
      return this.#refuse(req, 500, 'storage_error', 'The keys could not be stored', sha256)
    }
    actor.keys.adopt(payload.keys.map((record) => record.kid))
    actor.publish()
    this.#staged = undefined
    const rows: RestoredKeyRow[] = payload.keys.map((k) => [
      k.kid,
      k.type,
      k.mode ?? '',
      k.secret ? 1 : 0,
      k.created,
      k.updated,
    ])
    const { head } = header
    return {
      status: 200,
      body: {
        source: {
          devid: header.devid,
          log_key: encodeBase64(header.logKey),
          head: { file: head.file, seq: head.seq, chain: Buffer.from(head.chain).toString('hex') },
        },
        created: header.created,
        sha256,
        cfg: payload.cfg,
        user: payload.login.user,
        master: payload.login.master,
        salt: payload.login.salt,
        keys: rows,
      },
    }
  }

  async #refuse(
    req: CommandRequest,
    status: number,
    code: string,
    message: string,
    sha256: string | undefined,
  ): Promise<CommandReply> {
    const result = status === 500 ? LogResult.ERROR : LogResult.FAILED
    const data = { status, code, rid: req.rid, ...(sha256 ? { sha256 } : {}) }
    await this.o.actor.journal([{ type: LogType.RESTORE, result, data }])
    return fail(status, code, message)
  }

  #notFresh(): CommandReply | undefined {
    const identity = this.o.actor.identityState
    if (!identity) return fail(503, 'bus_unavailable', 'The device identity is not known yet; try again')
    if (identity.inited)
      return fail(409, 'already_personalised', 'The device is personalised: restore needs a fresh one')
    return undefined
  }

  #byId(req: CommandRequest): Upload | undefined {
    const id = (req.body as { upload?: unknown } | undefined)?.upload
    return this.#upload && this.#upload.id === id ? this.#upload : undefined
  }
}
