/** Bytes as standard base64 (with padding), the encoding of keys and certificates on the API. */
export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
