import { createHmac } from 'node:crypto'
import { toBase64Url } from './base64url.js'

/** The MAC field: base64url of the first 16 bytes of HMAC-SHA256(K, line up to and including the last `|`). */
export function lineMac(key: Uint8Array, signed: string): string {
  return toBase64Url(createHmac('sha256', key).update(signed, 'utf8').digest().subarray(0, 16))
}
