// base64url without padding: encoded with Buffer (the journal writer's fast path), decoded strictly
// (from-base64url.ts, shared with the management app): the journal's fields have one spelling only.

export { fromBase64Url } from './from-base64url.js'

export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}
