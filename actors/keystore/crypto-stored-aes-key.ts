import { type KeyRecord, keyTypes } from '../../protocol/index.js'
import { CryptoRefusal } from './crypto-refusal.js'

/**
 * The leading `width` bytes of a stored AES key (a shorter algorithm uses a longer key's leading
 * bytes), in a copy the caller wipes; 406 for any other key or one narrower than `width`.
 */
export function storedAesKey(key: Readonly<KeyRecord>, width: number, alg: string): Uint8Array {
  if (keyTypes[key.type].kind !== 'aes' || !key.secret)
    throw new CryptoRefusal('wrong_key_type', 'The key is not an AES key (an ECDH key needs `ext_kid` or `pubkey`)')
  if (key.secret.length < width)
    throw new CryptoRefusal('key_too_short', `${alg} needs a key of at least ${width} bytes`)
  return key.secret.slice(0, width)
}
