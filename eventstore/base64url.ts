// base64url without padding, decoded strictly: the journal's fields must have one spelling only.

const ALPHABET = /^[A-Za-z0-9_-]*$/

export function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}

/** The decoded bytes, or undefined when `text` is not canonical unpadded base64url. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!ALPHABET.test(text) || text.length % 4 === 1) return undefined
  const bytes = Buffer.from(text, 'base64url')
  // Re-encoding rejects non-zero trailing bits, which Buffer silently drops.
  return bytes.toString('base64url') === text ? new Uint8Array(bytes) : undefined
}
