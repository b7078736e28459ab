// The refusals the client tells apart by their `error` code (the backup routes', docs/backup.md): each a class of
// its own under the class of its status, so that a caller catches `BadBackupError` or all 406s alike. hemctl's
// session throws them; the management app words refusals by their code and leaves these out of its bundle.
import { BadRequestError, ConflictError, type DeviceRefusedError, NotAcceptableError, refusal } from './errors.js'

/** 400 weak_passphrase: a backup passphrase shorter than 12 bytes. */
export class WeakPassphraseError extends BadRequestError {
  override name = 'WeakPassphraseError'
}
/** 406 bad_backup: the backup passphrase is wrong or the file was altered (the device tells neither apart). */
export class BadBackupError extends NotAcceptableError {
  override name = 'BadBackupError'
}
/** 406 unsupported_backup: another format version, or a backup newer than the device reads. */
export class UnsupportedBackupError extends NotAcceptableError {
  override name = 'UnsupportedBackupError'
}
/** 409 no_backup_passphrase: no backup is made until the owner sets a backup passphrase. */
export class NoBackupPassphraseError extends ConflictError {
  override name = 'NoBackupPassphraseError'
}
/** 409 already_personalised: a restore goes onto a fresh device only (not personalised, or wiped out). */
export class AlreadyPersonalisedError extends ConflictError {
  override name = 'AlreadyPersonalisedError'
}
/** 409 nothing_staged: a restore needs a backup file uploaded first (since the device's last start). */
export class NothingStagedError extends ConflictError {
  override name = 'NothingStagedError'
}

/** The refusals a class of their own tells apart by their `error` code, within their status. */
const byCode: Record<string, [number, typeof DeviceRefusedError]> = {
  weak_passphrase: [400, WeakPassphraseError],
  bad_backup: [406, BadBackupError],
  unsupported_backup: [406, UnsupportedBackupError],
  no_backup_passphrase: [409, NoBackupPassphraseError],
  already_personalised: [409, AlreadyPersonalisedError],
  nothing_staged: [409, NothingStagedError],
}

/** The error class for an answer's `error` code where that has a class of its own, else for its status. */
export function codedRefusal(status: number, body: unknown, what: string): DeviceRefusedError {
  const code = (body as { error?: unknown } | undefined)?.error
  const coded = typeof code === 'string' && Object.hasOwn(byCode, code) ? byCode[code] : undefined
  const known = coded?.[0] === status ? coded[1] : undefined
  return known ? new known(status, body, what) : refusal(status, body, what)
}
