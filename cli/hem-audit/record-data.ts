import { decodeRecordData } from '../../eventstore/index.js'

/** A record's data, or undefined when it does not decode: what the audit commands tell is read, never trusted. */
export function recordData(record: Parameters<typeof decodeRecordData>[0]): Record<string, unknown> | undefined {
  try {
    return decodeRecordData(record)
  } catch {
    return undefined
  }
}
