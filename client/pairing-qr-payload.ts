// What a pairing's QR code carries (ext-auth-contract Sequence A, step 5): the authenticator opens
// `link`, and refuses a request whose SHA-256 is not `hash`, so a broker cannot swap the device's request.
import { sha256 } from '@noble/hashes/sha2.js'
import { toBase64 } from './base64.js'

/** The QR code's JSON, keys in the family's order: `{"link","hash","user","email","hostname"}`. */
export function pairingQrPayload(
  link: string,
  request: string,
  device: { user: string; email: string; hostname: string },
): string {
  const hash = toBase64(sha256(new TextEncoder().encode(request)))
  return JSON.stringify({ link, hash, user: device.user, email: device.email, hostname: device.hostname })
}
