// The backup routes' refusals in the owner's words, with what to do next: the device's own are terse, and it tells
// a wrong passphrase from an altered file apart on purpose for nobody.
import {
  AlreadyPersonalisedError,
  BadBackupError,
  DeviceRefusedError,
  NoBackupPassphraseError,
  NothingStagedError,
  UnsupportedBackupError,
  WeakPassphraseError,
} from '../client/browser.js'
import { reworded } from './refusal-words.js'

const WORDS: [new (...args: never[]) => DeviceRefusedError, string][] = [
  [BadBackupError, 'The passphrase is wrong or the file was altered: nothing was restored'],
  [UnsupportedBackupError, 'This device cannot read this backup (another format version, or a newer one)'],
  [AlreadyPersonalisedError, 'The device is set up already: a backup goes onto a fresh or erased device only'],
  [NothingStagedError, 'The device holds no uploaded backup (did it restart?): restore again'],
  [NoBackupPassphraseError, 'Set a backup passphrase first: every backup is sealed under it'],
  [WeakPassphraseError, 'The backup passphrase is too short: at least 12 bytes'],
]

/** `error` reworded when it is a backup refusal, else as it is: for `.catch`. */
export function inBackupWords(error: unknown): never {
  const words = WORDS.find(([kind]) => error instanceof kind)?.[1]
  throw words === undefined ? error : reworded(error as DeviceRefusedError, words)
}
