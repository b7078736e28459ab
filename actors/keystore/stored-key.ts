import type { KeyRecord } from '../../protocol/index.js'
import type { KeystoreContext } from './keystore-context.js'

/** The stored key `kid` while it is in service: not once its deletion may have been journaled. */
export function storedKey(actor: KeystoreContext, kid: string): Readonly<KeyRecord> | undefined {
  return actor.retiring.has(kid) ? undefined : actor.repository.get(kid)
}
