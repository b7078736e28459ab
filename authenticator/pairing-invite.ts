import { PairingError } from './pairing-error.js'

/** What a client shows as a QR code (contract §0 sequence A step 5), or a bare registration link. */
export interface PairingInvite {
  link: string
  /** Base64 SHA-256 of the request, or `not_implemented_yet`; absent for a bare link. */
  hash?: string
  user?: string
  email?: string
  hostname?: string
}

const SHOWN_FIELDS = ['hash', 'user', 'email', 'hostname'] as const
const MAX_INVITE = 4096
const MAX_FIELD = 256

/** The QR JSON `{"link","hash","user","email","hostname"}` or a bare http(s) link; a PairingError for anything else. */
export function parsePairingInvite(text: string): PairingInvite {
  const trimmed = text.trim()
  if (trimmed.length > MAX_INVITE) throw new PairingError('the pairing invitation is too long')
  if (!trimmed.startsWith('{')) return { link: checkedLink(trimmed) }
  let json: unknown
  try {
    json = JSON.parse(trimmed)
  } catch {
    throw new PairingError('the pairing invitation is neither JSON nor a link')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new PairingError('the pairing invitation is not a JSON object')
  const fields = json as Record<string, unknown>
  const invite: PairingInvite = { link: checkedLink(fields.link) }
  for (const name of SHOWN_FIELDS) {
    const value = fields[name]
    if (value === undefined) continue
    if (typeof value !== 'string' || value.length > MAX_FIELD)
      throw new PairingError(`the pairing invitation's ${name} is not a short string`)
    invite[name] = value
  }
  return invite
}

/** A registration link: an absolute http(s) URL (the broker's `/notify/register/challenge/<rid>`). */
function checkedLink(value: unknown): string {
  if (typeof value !== 'string') throw new PairingError('the pairing invitation has no link')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new PairingError('the pairing link is not a URL')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PairingError('the pairing link is not http(s)')
  if (url.username || url.password) throw new PairingError('the pairing link carries credentials')
  return url.href
}
