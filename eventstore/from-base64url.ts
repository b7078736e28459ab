// Strict base64url decoding without Buffer, so that the management app reads records as hemd does.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i

/** The decoded bytes, or undefined when `text` is not canonical unpadded base64url. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (text.length % 4 === 1) return undefined
  const out = new Uint8Array((text.length * 3) >> 2)
  let bits = 0
  let acc = 0
  let o = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const value = c < 128 ? VALUE[c]! : -1
    if (value < 0) return undefined
    acc = ((acc << 6) | value) & 0xffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = acc >> bits
      acc &= (1 << bits) - 1
    }
  }
  // The journal's fields have one spelling only: the unused bits of the last char must be zero.
  return acc === 0 ? out : undefined
}
