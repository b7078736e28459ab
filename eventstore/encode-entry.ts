// Checks a caller's entry at the boundary and encodes its fields, so that a bad entry fails
// with a TypeError before anything of its batch is written.

import { packData } from './pack-data.js'
import { LogType, type JournalEntry, type LogResultNumber } from '../protocol/index.js'

export interface EncodedEntry {
  type: number
  result: LogResultNumber
  subject: string
  /** The data field: base64url of the msgpack map, or empty. */
  data: string
}

export const MAX_SUBJECT_CHARS = 128
export const MAX_DATA_CHARS = 16 * 1024

/** Written by the journal itself, never by a caller. */
const RESERVED: ReadonlySet<number> = new Set([LogType.KEY_INIT, LogType.LINK, LogType.SEAL])

export function encodeEntry(entry: JournalEntry): EncodedEntry {
  const { type, result, subject = '', data } = entry
  if (!Number.isInteger(type) || type < 0 || type > 0xffff)
    throw new TypeError(`entry type must be an integer 0..0xffff, got ${String(type)}`)
  if (RESERVED.has(type)) throw new TypeError(`entry type ${type} is written by the journal itself`)
  if (result !== 0 && result !== 1 && result !== 2)
    throw new TypeError(`entry result must be 0, 1 or 2, got ${String(result)}`)
  if (typeof subject !== 'string' || /[|\n\r]/.test(subject))
    throw new TypeError('entry subject must be a string without |, \\n or \\r')
  if (subject.length > MAX_SUBJECT_CHARS) throw new TypeError(`entry subject is longer than ${MAX_SUBJECT_CHARS} chars`)
  if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data))) {
    throw new TypeError('entry data must be a plain object')
  }
  let field = ''
  if (data !== undefined) {
    try {
      field = packData(data)
    } catch (err) {
      throw new TypeError('entry data cannot be encoded', { cause: err })
    }
  }
  if (field.length > MAX_DATA_CHARS) throw new TypeError(`entry data encodes to more than ${MAX_DATA_CHARS} chars`)
  return { type, result, subject, data: field }
}
