// One key slot of the repository's media: its format, and what a slot's bytes hold.
//
// A slot (big-endian numbers) is one of:
//   free       all zero bytes
//   live       'HK' 0x01 version(1) generation(u32) serial(u32) length(u16) sealed(length) zeros
//   deleted    'HK' 0x02 version(1) zeros: a tombstone, the sealed bytes are overwritten
// `sealed` is the enclave's seal of the encoded KeyRecord with AAD = FORMAT 0x00 devid 0x00
// index(u32) header-up-to-length(12), so a slot does not open on another device, at another
// index, or with an edited generation or serial (an edited length cuts the ciphertext wrong).
// `serial` keeps the creation order across updates and reboots; `generation` counts the
// versions of one key, so that an update interrupted between writing the new version and
// tombstoning the old one resolves to the new one.

import { type Sealer, UnsealError } from '../../hal/index.js'
import type { KeyRecord } from '../../protocol/index.js'
import type { KeyRecordFormatError } from './errors.js'
import { decodeKeyRecord } from './key-record-codec.js'

const FORMAT = 'hemd key slot v1'
const VERSION = 1
const MAGIC = [0x48, 0x4b] // 'HK'
const LIVE = 0x01
const DELETED = 0x02
export const LENGTH_AT = 12
export const HEADER = 14

export type SlotState = 'free' | 'live' | 'deleted' | 'invalid'

export interface Entry {
  index: number
  generation: number
  serial: number
  /** Bytes of the slot's record: its header and the sealed bytes. */
  length: number
  record: KeyRecord
}

type ReadSlot = { state: 'free' | 'deleted' } | { state: 'invalid'; problem: string } | { state: 'live'; entry: Entry }

export async function readSlot(
  slot: Uint8Array,
  index: number,
  sealer: Pick<Sealer, 'unseal'>,
  devid: string,
): Promise<ReadSlot> {
  const invalid = (problem: string): ReadSlot => ({ state: 'invalid', problem })
  if (allZero(slot)) return { state: 'free' }
  if (slot[0] !== MAGIC[0] || slot[1] !== MAGIC[1]) return invalid('not a key slot (bad magic)')
  if (slot[3] !== VERSION) return invalid(`unknown format version ${slot[3]}`)
  if (slot[2] === DELETED) {
    return allZero(slot.subarray(4)) ? { state: 'deleted' } : invalid('a tombstone that still holds data')
  }
  if (slot[2] !== LIVE) return invalid(`unknown state ${slot[2]}`)
  const view = new DataView(slot.buffer, slot.byteOffset, slot.byteLength)
  const generation = view.getUint32(4)
  const serial = view.getUint32(8)
  const length = view.getUint16(LENGTH_AT)
  if (generation === 0 || serial === 0) return invalid('generation or serial is zero')
  if (HEADER + length > slot.length) return invalid(`sealed length ${length} runs past the end of the slot`)
  if (!allZero(slot.subarray(HEADER + length))) return invalid('bytes after the sealed record are not zero')
  let plaintext: Uint8Array
  try {
    plaintext = await sealer.unseal(
      slot.subarray(HEADER, HEADER + length),
      aad(devid, index, slot.subarray(0, LENGTH_AT)),
    )
  } catch (err) {
    if (err instanceof UnsealError) return invalid('the seal does not open (altered, moved, or from another device)')
    throw err
  }
  try {
    const record = decodeKeyRecord(plaintext)
    return { state: 'live', entry: { index, generation, serial, length: HEADER + length, record } }
  } catch (err) {
    return invalid(`the record does not decode: ${(err as KeyRecordFormatError).message}`)
  } finally {
    // The record in clear: the decoded record holds copies of its own.
    plaintext.fill(0)
  }
}

/** Whether two slots hold the same version of the same key. */
export function sameVersion(a: Entry, b: Entry | undefined): boolean {
  return b !== undefined && a.record.kid === b.record.kid && a.generation === b.generation && a.serial === b.serial
}

/** The header of a live slot up to the length, which the seal binds (the length is known after sealing). */
export function slotHeader(generation: number, serial: number): Uint8Array {
  const header = new Uint8Array(LENGTH_AT)
  const view = new DataView(header.buffer)
  header.set([...MAGIC, LIVE, VERSION])
  view.setUint32(4, checkedU32(generation, 'generation'))
  view.setUint32(8, checkedU32(serial, 'serial'))
  return header
}

let zeros = new Uint8Array(0)

/** Whether every byte is zero, by memcmp: a boot checks every slot, 4 MiB of them, mostly free. */
function allZero(bytes: Uint8Array): boolean {
  if (zeros.length < bytes.length) zeros = new Uint8Array(bytes.length)
  return Buffer.compare(bytes, zeros.subarray(0, bytes.length)) === 0
}

export function tombstone(): Uint8Array {
  return Uint8Array.from([...MAGIC, DELETED, VERSION])
}

export function aad(devid: string, index: number, header: Uint8Array): Uint8Array {
  const label = new TextEncoder().encode(`${FORMAT}\0${devid}\0`)
  const bound = new Uint8Array(label.length + 4 + header.length)
  bound.set(label)
  new DataView(bound.buffer).setUint32(label.length, index)
  bound.set(header, label.length + 4)
  return bound
}

function checkedU32(value: number, name: string): number {
  if (value > 0xffffffff) throw new RangeError(`the key slot ${name} has run out`)
  return value
}
