import type { KeyRecord } from '../../protocol/index.js'
import type { KeystoreContext } from './keystore-context.js'

/** The stored key `kid` while its machine says it serves: not once its deletion may have been journaled. */
export function storedKey(actor: KeystoreContext, kid: string): Readonly<KeyRecord> | undefined {
  return actor.keys.serves(kid) ? actor.repository.get(kid) : undefined
}
