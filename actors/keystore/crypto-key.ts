import type { KeyRecord } from '../../protocol/index.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { KeystoreContext } from './keystore-context.js'
import { storedKey } from './stored-key.js'

/** The stored key a crypto operation (or derive) names, or its 406: also while the key is being deleted. */
export function cryptoKey(actor: KeystoreContext, kid: string, field = 'kid'): Readonly<KeyRecord> {
  const key = storedKey(actor, kid)
  if (!key) throw new CryptoRefusal('key_not_found', `No key with this ${field}`)
  return key
}
