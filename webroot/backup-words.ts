// The backup routes' refusals in the owner's words, by the device's `error` code: its own words are terse, and it
// tells a wrong passphrase from an altered file apart for nobody, on purpose.
import type { DeviceRefusedError } from '../client/browser.js'
import { reworded } from './refusal-words.js'

const WORDS = new Map(
  Object.entries({
    bad_backup: 'The passphrase is wrong or the file was altered',
    unsupported_backup: 'This device does not read this backup’s version',
    already_personalised: 'A backup goes onto a fresh or erased device only',
    nothing_staged: 'Upload the backup again',
    no_backup_passphrase: 'Set a backup passphrase first',
  }),
)

/** For `.catch`: a backup refusal rethrown in its words, anything else as it is. */
export function inBackupWords(error: unknown): never {
  const words = WORDS.get((error as Partial<DeviceRefusedError> | undefined)?.code ?? '')
  throw words ? reworded(error as DeviceRefusedError, words) : error
}
