import { lineMac } from './line-mac.js'
import type { LineFields } from './record-line.js'

/** The stored bytes of a record line, MAC'd with the file key, newline included. */
export function formatLine(fields: LineFields, key: Uint8Array): Uint8Array {
  const signed =
    `${fields.seq.toString(16)}|${fields.time.toString(16)}|${fields.type.toString(16)}|` +
    `${fields.result}|${fields.subject}|${fields.data}|`
  return new Uint8Array(Buffer.from(`${signed}${lineMac(key, signed)}\n`, 'utf8'))
}
