// Base64 without Buffer: code shared with a browser (the client, the authenticator, the ext-auth core) runs in both.

/** Standard base64 with padding, as the device's JSON fields carry it. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** base64url without padding, as JWT parts are written. */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')
}

/** Either alphabet, padded or not (as Buffer.from(text, 'base64') reads them); throws on other characters. */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'))
  return Uint8Array.from(binary, (char) => char.charCodeAt(0))
}
