// HMAC-SHA256 (RFC 2104) with the key's padded blocks made once per key: a file's lines share
// one key, and an HMAC object per line was most of the cost of checking a journal at boot.

import { hash } from 'node:crypto'
import { bytesEqual } from './bytes-equal.js'

const BLOCK = 64
const DIGEST = 32

interface Pads {
  key: Uint8Array
  /** K ⊕ ipad. */
  inner: Buffer
  /** K ⊕ opad, then room for the inner digest. */
  outer: Buffer
}

let last: Pads | undefined
/** Where the inner hash's input is assembled: hashing is synchronous, so one buffer serves every line. */
let message = Buffer.allocUnsafe(4096)

function padsFor(key: Uint8Array): Pads {
  // Compared by content, not identity: a caller may reuse or wipe its key's memory.
  if (last && bytesEqual(last.key, key)) return last
  const k = key.length > BLOCK ? hash('sha256', key, 'buffer') : key
  const inner = Buffer.alloc(BLOCK, 0x36)
  const outer = Buffer.alloc(BLOCK + DIGEST, 0x5c)
  for (let i = 0; i < k.length; i++) {
    inner[i]! ^= k[i]!
    outer[i]! ^= k[i]!
  }
  last = { key: new Uint8Array(key), inner, outer }
  return last
}

/** The MAC field: base64url of the first 16 bytes of HMAC-SHA256(K, line up to and including the last `|`). */
export function lineMac(key: Uint8Array, signed: string): string {
  const { inner, outer } = padsFor(key)
  // At most 3 UTF-8 bytes per UTF-16 unit.
  if (BLOCK + 3 * signed.length > message.length) message = Buffer.allocUnsafe(2 * (BLOCK + 3 * signed.length))
  inner.copy(message, 0)
  const length = BLOCK + message.write(signed, BLOCK, 'utf8')
  hash('sha256', message.subarray(0, length), 'buffer').copy(outer, BLOCK)
  return hash('sha256', outer, 'buffer').subarray(0, 16).toString('base64url')
}
