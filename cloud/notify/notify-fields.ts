import { decodeBase64, encodeBase64 } from '../../protocol/index.js'
import { NotifyRefusal } from './notify-refusal.js'

/** The longest JWT the broker takes (`request`, `reply`, `authreply`; an `authreq` with 8 sealed scopes fits). */
export const MAX_JWT = 8192
/** The longest push token (`fid`): FCM's are about 160 characters. */
export const MAX_FID = 512

export type Fields = Readonly<Record<string, unknown>>

function badField(name: string, what: string): NotifyRefusal {
  return new NotifyRefusal(400, 'bad_field', `${name}: ${what}`)
}

/** The JSON body as an object of fields; anything else is a 400. */
export function fieldsOf(body: unknown): Fields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new NotifyRefusal(400, 'bad_body', 'the body must be a JSON object')
  }
  return body as Fields
}

/** A field of exactly `length` bytes in base64 (either alphabet, padded or not: contract, encodings). */
export function bytesField(fields: Fields, name: string, length = 32): Uint8Array {
  const value = fields[name]
  const bytes = typeof value === 'string' ? decodeBase64(value) : undefined
  if (bytes?.length !== length) throw badField(name, `must be base64 of ${length} bytes`)
  return bytes
}

/** A string field of `min`…`max` characters. */
export function textField(fields: Fields, name: string, max: number, min = 1): string {
  const value = fields[name]
  if (typeof value !== 'string' || value.length < min || value.length > max) {
    throw badField(name, `must be a string of ${min} to ${max} characters`)
  }
  return value
}

/** A 256-bit value in a path (a `pidx`): base64url without padding, or any base64 of 32 bytes; else unknown. */
export function pathBytes(value: string | undefined, what: string): Uint8Array {
  const bytes = value === undefined ? undefined : decodeBase64(value)
  if (bytes?.length !== 32) throw new NotifyRefusal(404, 'not_found', `no such ${what}`)
  return bytes
}

/** A broker id in a path (`rid`, `eventid`): 64 lower-case hex digits, else unknown. */
export function pathId(value: string | undefined, what: string): string {
  if (value === undefined || !/^[0-9a-f]{64}$/.test(value)) throw new NotifyRefusal(404, 'not_found', `no such ${what}`)
  return value
}

/** Binary in JSON answers: standard base64 with padding. */
export const b64 = encodeBase64

/** A 256-bit value as a KV key (eid, pid, aid): base64url without padding, which KV keys allow. */
export function keyName(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url')
}

/** A fresh broker id (`rid`, `eventid`): 32 random bytes as 64 hex digits (contract §2.1, §6.12). */
export function newId(random: (n: number) => Uint8Array): string {
  return Buffer.from(random(32)).toString('hex')
}
