import type { OperationSpec } from '../bus/service-host.js'
import { cipher } from './cipher.js'
import { createKey, deleteKey, getKey, importKey, listKeys, searchKeys, updateKey } from './key-management.js'
import type { KeystoreActor } from './keystore-actor.js'

/**
 * The keystore's commands. Changes to the repository run one at a time; reads and ciphers
 * overlap, so that concurrent requests share the journal's group commit.
 */
export function keystoreOperations(actor: KeystoreActor): Record<string, OperationSpec> {
  return {
    create: { handler: (req) => createKey(actor, req) },
    import: { handler: (req) => importKey(actor, req) },
    update: { handler: (req) => updateKey(actor, req) },
    delete: { handler: (req) => deleteKey(actor, req) },
    get: { exclusive: false, handler: (req) => getKey(actor, req) },
    list: { exclusive: false, handler: (req) => listKeys(actor, req) },
    search: { exclusive: false, handler: (req) => searchKeys(actor, req) },
    encrypt: { exclusive: false, handler: (req) => cipher(actor, req, 'encrypt') },
    decrypt: { exclusive: false, handler: (req) => cipher(actor, req, 'decrypt') },
  }
}
