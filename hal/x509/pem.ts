export function toPem(label: string, der: Uint8Array): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}

/** The DER of every `label` block in `text`, in order. */
export function fromPem(text: string, label: string): Uint8Array[] {
  const block = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+?)-----END ${label}-----`, 'g')
  return [...text.matchAll(block)].map((match) => new Uint8Array(Buffer.from(match[1] ?? '', 'base64')))
}
