// Backup and restore (docs/backup.md): the backup passphrase, a backup file made by the device, and its restore
// onto a fresh device. Free of node: the management app runs these as hemctl does; the file's two transfers are
// backup-transfer.ts (the app moves those bytes by the browser's own means).
import type { DeviceJson } from './device-json.js'
import { UnexpectedAnswerError } from './errors.js'

/** The scope of the backup routes: role M only, and it decrypts nothing. */
export const BACKUP_SCOPE = 'system:backup'

/** The name every client gives an uploaded backup file (the device keeps its own name for it). */
export const RESTORE_FILENAME = 'backup.hembackup'

/** The backup passphrase's bounds, in UTF-8 bytes after NFC, as the device counts them (400 weak_passphrase). */
export const BACKUP_PASSPHRASE_BYTES = { min: 12, max: 1024 } as const

/** Why the device would refuse `passphrase` as a backup passphrase, or undefined when it would not. */
export function backupPassphraseProblem(passphrase: string): string | undefined {
  const bytes = new TextEncoder().encode(passphrase.normalize('NFC')).length
  if (bytes < BACKUP_PASSPHRASE_BYTES.min)
    return `a backup passphrase has at least ${BACKUP_PASSPHRASE_BYTES.min} bytes (this one has ${bytes})`
  if (bytes > BACKUP_PASSPHRASE_BYTES.max)
    return `a backup passphrase has at most ${BACKUP_PASSPHRASE_BYTES.max} bytes (this one has ${bytes})`
  return undefined
}

/** Sets or replaces the backup passphrase (a master login, scope system:backup); the device keeps only its key. */
export async function setBackupPassphrase(s: Pick<DeviceJson, 'authorizedJson'>, passphrase: string): Promise<void> {
  await s.authorizedJson(BACKUP_SCOPE, 'POST', '/api/system/backup/passphrase', { json: { passphrase } })
}

/** What a restore answers: the source device, how many keys it restored, and the file's SHA-256 (hex). */
export interface Restored {
  source: string
  keys: number
  sha256: string
}

export const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * Opens the staged backup under `passphrase` and makes the fresh device its source's owner's (no token: nobody
 * owns it yet). The owner then logs in with the source's passphrases.
 */
export async function restore(s: Pick<DeviceJson, 'json'>, passphrase: string): Promise<Restored> {
  const answer = await s.json<Partial<Restored> | undefined>('POST', '/api/system/restore', { json: { passphrase } })
  const { source, keys, sha256 } = answer ?? {}
  if (
    typeof source !== 'string' ||
    !Number.isSafeInteger(keys) ||
    (keys as number) < 0 ||
    !SHA256_HEX.test(`${sha256}`)
  )
    throw new UnexpectedAnswerError('the device answered the restore in another shape')
  return { source, keys: keys as number, sha256: sha256 as string }
}

/** A name the device suggests for a backup file, or ours when it suggests none fit for a file system. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
export const DEFAULT_BACKUP_FILENAME = 'hem.hembackup'

/**
 * The file name of a `Content-Disposition: attachment; filename="…"`. A name with a path, or anything else than
 * letters, digits, dots, dashes and underscores, is not taken: a device must not choose where a file is written.
 */
export function backupFilename(contentDisposition: string | null | undefined): string {
  const name = /;\s*filename="([^"]*)"/i.exec(contentDisposition ?? '')?.[1]
  return name !== undefined && SAFE_NAME.test(name) && !name.includes('..') ? name : DEFAULT_BACKUP_FILENAME
}
