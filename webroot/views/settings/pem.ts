// PEM in the page (RFC 7468): what the owner's files hold, and how a CSR is offered.
import { fromBase64, toBase64 } from '../../../client/base64.js'

/** `der` as one `label` block, 64 base64 characters a line. */
export function toPem(label: string, der: Uint8Array): string {
  const lines = toBase64(der).match(/.{1,64}/g) ?? []
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join('\n')
}

/** The DER of every `label` block in `text`, in order (none when there is none). */
export function pemBlocks(text: string, label: string): Uint8Array[] {
  const block = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+?)-----END ${label}-----`, 'g')
  return [...text.matchAll(block)].map((match) => fromBase64((match[1] ?? '').replace(/\s+/g, '')))
}
