const B64_CHARS = /^[A-Za-z0-9+/_-]*$/

/**
 * Strict base64 of either alphabet, padded or not (device contract: input encodings). Unlike
 * Buffer.from it refuses stray characters, misplaced padding and non-zero trailing bits.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  const body = text.replace(/={1,2}$/, '')
  if (!B64_CHARS.test(body) || body.length % 4 === 1) return undefined
  if (body.length !== text.length && text.length % 4 !== 0) return undefined
  const bytes = Buffer.from(body, 'base64')
  if (bytes.toString('base64url') !== body.replaceAll('+', '-').replaceAll('/', '_')) return undefined
  return new Uint8Array(bytes)
}

/** A request field meant to hold base64: its bytes, or undefined when it is no string or no strict base64. */
export function base64Field(value: unknown): Uint8Array | undefined {
  return typeof value === 'string' ? decodeBase64(value) : undefined
}

/** Binary values in JSON answers: standard base64 with padding (device contract, encodings). */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64')
}
