import { hmacSha256, toBase64, x25519Agree } from '../protocol/browser.js'

/** A pairing's own proof to the broker: its keys, the aid-bound session key (`POST /notify/session {aid}`), a nonce. */
export interface AppProofInput {
  pid: string
  aid: Uint8Array
  aidPrv: Uint8Array
  epk: Uint8Array
  nonce: Uint8Array
}

/** `POST /notify/subscribers/delete` from the app (§4.3): mac = HMAC(S_ab′, nonce). */
export function unpairBody(input: AppProofInput): {
  pid: string
  epk: string
  nonce: string
  mac: string
  aid: string
} {
  const mac = hmacSha256(x25519Agree(input.aidPrv, input.epk), input.nonce)
  return {
    pid: input.pid,
    epk: toBase64(input.epk),
    nonce: toBase64(input.nonce),
    mac: toBase64(mac),
    aid: toBase64(input.aid),
  }
}

/** `POST /notify/subscribers/token` (§3.5.2, §2.6): mac = HMAC(S_ab′, nonce ‖ utf8(fid)). */
export function pushTokenBody(input: AppProofInput & { fid: string }): {
  pid: string
  aid: string
  fid: string
  nonce: string
  mac: string
} {
  const fid = new TextEncoder().encode(input.fid)
  const message = new Uint8Array(input.nonce.length + fid.length)
  message.set(input.nonce)
  message.set(fid, input.nonce.length)
  const mac = hmacSha256(x25519Agree(input.aidPrv, input.epk), message)
  return { pid: input.pid, aid: toBase64(input.aid), fid: input.fid, nonce: toBase64(input.nonce), mac: toBase64(mac) }
}
