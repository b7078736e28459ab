import type { OperationSpec } from '../../bus/index.js'
import { type CommandReply, type CommandRequest, type KeyOperation, keyOperationAccess } from '../../protocol/index.js'
import { cipher } from './cipher.js'
import { ecdh } from './crypto-ecdh.js'
import { exdsa } from './crypto-exdsa.js'
import { hmac } from './crypto-hmac.js'
import { keyWrap } from './crypto-key-wrap.js'
import { mldsa } from './crypto-mldsa.js'
import { mlkem } from './crypto-mlkem.js'
import { type CryptoOperation, cryptoOperation } from './crypto-operation.js'
import { deriveKey } from './derive-key.js'
import { createKey, deleteKey, getKey, importKey, listKeys, searchKeys, updateKey } from './key-management.js'
import type { KeystoreContext } from './keystore-context.js'

/**
 * The keystore's commands, each behind its own check of the caller's bearer token (the key store
 * takes nobody's word for who is asking): a connection with the gateway's bus credentials and no
 * user's token can do no more than an anonymous HTTP client, an anonymous key search. Changes to
 * the repository (a derive too) run one at a time; reads and crypto operations overlap, so that
 * concurrent requests share the journal's group commit.
 */
export function keystoreOperations(actor: KeystoreContext): Record<KeyOperation, OperationSpec> {
  const checked = (
    op: KeyOperation,
    run: (req: CommandRequest) => Promise<CommandReply> | CommandReply,
    exclusive = true,
  ): OperationSpec => actor.guard.operation(keyOperationAccess(op), run, exclusive)
  const crypto = <R>(op: KeyOperation, operation: CryptoOperation<R>, exclusive = false): OperationSpec =>
    checked(op, (req) => cryptoOperation(actor, req, operation), exclusive)
  return {
    create: checked('create', (req) => createKey(actor, req)),
    import: checked('import', (req) => importKey(actor, req)),
    update: checked('update', (req) => updateKey(actor, req)),
    delete: checked('delete', (req) => deleteKey(actor, req)),
    get: checked('get', (req) => getKey(actor, req), false),
    list: checked('list', (req) => listKeys(actor, req), false),
    search: checked('search', (req) => searchKeys(actor, req), false),
    derive: crypto('derive', deriveKey, true),
    encrypt: crypto('encrypt', cipher.encrypt),
    decrypt: crypto('decrypt', cipher.decrypt),
    sign: crypto('sign', exdsa.sign),
    verify: crypto('verify', exdsa.verify),
    hmac: crypto('hmac', hmac.hash),
    hmac_verify: crypto('hmac_verify', hmac.verify),
    ecdh: crypto('ecdh', ecdh),
    wrap: crypto('wrap', keyWrap.wrap),
    unwrap: crypto('unwrap', keyWrap.unwrap),
    mlkem_encaps: crypto('mlkem_encaps', mlkem.encaps),
    mlkem_decaps: crypto('mlkem_decaps', mlkem.decaps),
    mldsa_sign: crypto('mldsa_sign', mldsa.sign),
    mldsa_verify: crypto('mldsa_verify', mldsa.verify),
  }
}
