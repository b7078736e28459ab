import type { OperationSpec } from '../../bus/index.js'
import { type CommandReply, type CommandRequest, type KeyOperation, keyOperationAccess } from '../../protocol/index.js'
import { cipher } from './cipher.js'
import { createKey, deleteKey, getKey, importKey, listKeys, searchKeys, updateKey } from './key-management.js'
import type { KeystoreContext } from './keystore-context.js'

/**
 * The keystore's commands, each behind its own check of the caller's bearer token (the key store
 * takes nobody's word for who is asking): a connection with the gateway's bus credentials and no
 * user's token can do no more than an anonymous HTTP client, an anonymous key search. Changes to
 * the repository run one at a time; reads and ciphers overlap, so that concurrent requests share
 * the journal's group commit.
 */
export function keystoreOperations(actor: KeystoreContext): Record<KeyOperation, OperationSpec> {
  const checked = (
    op: KeyOperation,
    run: (req: CommandRequest) => Promise<CommandReply> | CommandReply,
    exclusive = true,
  ): OperationSpec => actor.guard.operation(keyOperationAccess(op), run, exclusive)
  return {
    create: checked('create', (req) => createKey(actor, req)),
    import: checked('import', (req) => importKey(actor, req)),
    update: checked('update', (req) => updateKey(actor, req)),
    delete: checked('delete', (req) => deleteKey(actor, req)),
    get: checked('get', (req) => getKey(actor, req), false),
    list: checked('list', (req) => listKeys(actor, req), false),
    search: checked('search', (req) => searchKeys(actor, req), false),
    encrypt: checked('encrypt', (req) => cipher(actor, req, 'encrypt'), false),
    decrypt: checked('decrypt', (req) => cipher(actor, req, 'decrypt'), false),
  }
}
