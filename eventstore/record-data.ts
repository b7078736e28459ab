// A record's data field: base64url of a msgpack map (KEY_INIT excepted: its data is a raw signature).
// Reading only, without node: the management app decodes records with it too (pack-data.ts writes them).

import { fromBase64Url } from './from-base64url.js'
import { decodeMsgpack } from './msgpack-map.js'
import { LogType, type RecordLine } from '../protocol/browser.js'

/** Decodes a data field to its map. Throws when it is not base64url of one msgpack map. */
export function unpackData(field: string): Record<string, unknown> {
  const bytes = fromBase64Url(field)
  if (!bytes) throw new Error('data is not canonical base64url')
  const value = decodeMsgpack(bytes)
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    throw new Error('data is not a msgpack map')
  }
  return value as Record<string, unknown>
}

/** The record's data map; undefined when it has none (or is KEY_INIT, whose data is not a map). */
export function decodeRecordData(record: RecordLine): Record<string, unknown> | undefined {
  if (record.type === LogType.KEY_INIT || record.data === '') return undefined
  return unpackData(record.data)
}
