// A backup file's two transfers over hemctl's session: its download from the device that makes it, and its
// upload to the fresh device that restores it, each with the progress of its bytes.
import { BACKUP_SCOPE, backupFilename, RESTORE_FILENAME, SHA256_HEX } from './backup-calls.js'
import type { DeviceSession } from './device-session.js'
import { UnexpectedAnswerError } from './errors.js'
import { fileUpload } from './file-upload.js'

/** A backup file and the name the device suggests for it. */
export interface Backup {
  bytes: Uint8Array
  filename: string
}

/** `received` bytes of `total` (undefined when the device streams the file without announcing its length). */
export type Received = (received: number, total: number | undefined) => void

/** Has the device make a backup file (a master login, scope system:backup) and downloads it. */
export async function createBackup(s: DeviceSession, o: { onProgress?: Received } = {}): Promise<Backup> {
  const answer = await s.authorized(BACKUP_SCOPE, 'GET', '/api/system/backup', {
    ...(o.onProgress ? { onReceived: o.onProgress } : {}),
  })
  const disposition = answer.headers['content-disposition']
  return { bytes: new Uint8Array(answer.bytes), filename: backupFilename(disposition) }
}

/** Uploads a backup file to a fresh device, which only keeps it (a second upload replaces it); no token. */
export async function stageRestore(
  s: DeviceSession,
  file: Uint8Array,
  o: { onProgress?: (sent: number, total: number) => void } = {},
): Promise<{ size: number; sha256: string }> {
  const answer = await s.json<{ size?: unknown; sha256?: unknown } | undefined>(
    'POST',
    '/api/system/restore/upload',
    fileUpload(file, RESTORE_FILENAME, o.onProgress),
  )
  const { size, sha256 } = answer ?? {}
  if (!Number.isSafeInteger(size) || !SHA256_HEX.test(`${sha256}`))
    throw new UnexpectedAnswerError('the device answered the upload without its size or SHA-256')
  return { size: size as number, sha256: sha256 as string }
}
