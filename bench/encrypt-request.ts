import { randomBytes } from 'node:crypto'

/** The body of `POST /api/crypto/cipher/encrypt`, as the baselines read it. */
export interface EncryptRequest {
  kid: string
  alg: string
  msg: Buffer
}

/** The request every encrypt scenario sends: AES256-GCM over 64 random bytes. */
export function encryptRequestBody(kid: string): string {
  return JSON.stringify({ kid, alg: 'AES256-GCM', msg: randomBytes(64).toString('base64') })
}

export function parseEncryptRequest(raw: Buffer): EncryptRequest {
  const body = JSON.parse(raw.toString('utf8')) as Partial<Record<keyof EncryptRequest, unknown>>
  if (typeof body.kid !== 'string' || typeof body.alg !== 'string' || typeof body.msg !== 'string') {
    throw new TypeError('expected {kid, alg, msg} strings')
  }
  return { kid: body.kid, alg: body.alg, msg: Buffer.from(body.msg, 'base64') }
}
