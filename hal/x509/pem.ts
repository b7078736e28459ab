// PEM (RFC 7468) without node, so that the management app reads and writes it as the device does.

/** `der` as one `label` block, 64 base64 characters a line. */
export function toPem(label: string, der: Uint8Array): string {
  let binary = ''
  for (const byte of der) binary += String.fromCharCode(byte)
  const lines = btoa(binary).match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}

/** The DER of every `label` block in `text`, in order (none when there is none). */
export function fromPem(text: string, label: string): Uint8Array[] {
  const block = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+?)-----END ${label}-----`, 'g')
  return [...text.matchAll(block)].map((match) =>
    Uint8Array.from(atob((match[1] ?? '').replace(/\s+/g, '')), (char) => char.charCodeAt(0)),
  )
}
