import { Packr } from 'msgpackr'

// Records (shared structures) would make a payload depend on what the decoder saw before.
const packr = new Packr({ useRecords: false, moreTypes: false })

export function encode(value: unknown): Uint8Array {
  return packr.pack(value)
}

export function decode<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T
}
