/**
 * The key store's backup and restore operations (docs/backup.md). The gateway sends the passphrase and the restore
 * upload's; the others only the auth service may send (bus/services.ts): it adds the configuration and the login keys
 * to a backup, and journals a restore once the key store has opened the file.
 */
export const BACKUP_OPS = {
  passphrase: 'backup_passphrase',
  create: 'backup_create',
  chunk: 'backup_chunk',
  uploadBegin: 'restore_upload_begin',
  open: 'restore_open',
  abort: 'restore_abort',
} as const

/** The operations of BACKUP_OPS that only the auth service may send. */
export const AUTH_BACKUP_OPS = [BACKUP_OPS.create, BACKUP_OPS.chunk, BACKUP_OPS.open, BACKUP_OPS.abort] as const
