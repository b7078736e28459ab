import { Packr } from 'msgpackr'
import { toBase64Url } from './base64url.js'

const packr = new Packr({ useRecords: false })

/** A record's data field: base64url of `data` as a msgpack map (record-data.ts reads it back). */
export function packData(data: Record<string, unknown>): string {
  // Packr reuses its buffer, so encode to text before the next pack.
  return toBase64Url(packr.pack(data))
}
