import { toBase64 } from '../protocol/browser.js'
import type { AidKey } from './aid-key.js'

/** A pairing's own proof to the broker: its key, the aid-bound session key (`POST /notify/session {aid}`), a nonce. */
export interface AppProofInput {
  pid: string
  aidKey: AidKey
  epk: Uint8Array
  nonce: Uint8Array
}

/** `POST /notify/subscribers/delete` from the app (§4.3): mac = HMAC(S_ab′, nonce). */
export async function unpairBody(input: AppProofInput): Promise<{
  pid: string
  epk: string
  nonce: string
  mac: string
  aid: string
}> {
  const mac = await (await input.aidKey.agree(input.epk)).hmac(input.nonce)
  return {
    pid: input.pid,
    epk: toBase64(input.epk),
    nonce: toBase64(input.nonce),
    mac: toBase64(mac),
    aid: toBase64(input.aidKey.aid),
  }
}

/** `POST /notify/subscribers/token` (§3.5.2, §2.6): mac = HMAC(S_ab′, nonce ‖ utf8(fid)). */
export async function pushTokenBody(input: AppProofInput & { fid: string }): Promise<{
  pid: string
  aid: string
  fid: string
  nonce: string
  mac: string
}> {
  const fid = new TextEncoder().encode(input.fid)
  const message = new Uint8Array(input.nonce.length + fid.length)
  message.set(input.nonce)
  message.set(fid, input.nonce.length)
  const mac = await (await input.aidKey.agree(input.epk)).hmac(message)
  return {
    pid: input.pid,
    aid: toBase64(input.aidKey.aid),
    fid: input.fid,
    nonce: toBase64(input.nonce),
    mac: toBase64(mac),
  }
}
