// The passphrase key derived with node's own PBKDF2: the reference the client's derivation is checked against.
import { pbkdf2Sync } from 'node:crypto'
import { eidSalt, passphraseKeyFromSeed, PBKDF2_ITERATIONS, type PassphraseKey } from '../../client/passphrase-key.js'

/** derivePassphraseKeyAsync on the calling thread: blocks the event loop for a few hundred ms. */
export function derivePassphraseKey(passphrase: string, eid: string): PassphraseKey {
  return passphraseKeyFromSeed(
    new Uint8Array(pbkdf2Sync(Buffer.from(passphrase, 'utf8'), eidSalt(eid), PBKDF2_ITERATIONS, 32, 'sha256')),
  )
}
