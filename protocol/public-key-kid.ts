// Apart from key-types.ts, which the management app bundles for the browser: this needs node:crypto.
import { createHash } from 'node:crypto'

/** KID of an asymmetric key: the first 16 bytes of SHA-1 of the public key `get` shows, as 32 lowercase hex. */
export function publicKeyKid(rawPublicKey: Uint8Array): string {
  return createHash('sha1').update(rawPublicKey).digest('hex').slice(0, 32)
}
