import type { KeyRecord } from '../../protocol/index.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { KeystoreContext } from './keystore-context.js'

/** The stored key a crypto operation names, or its 406. */
export function cryptoKey(actor: KeystoreContext, kid: string, field = 'kid'): Readonly<KeyRecord> {
  const key = actor.repository.get(kid)
  if (!key) throw new CryptoRefusal('key_not_found', `No key with this ${field}`)
  return key
}
