import { setup } from 'xstate'
import type { DiskCipher, DiskMode } from '../protocol/index.js'

export type DiskNumber = 0 | 1

/** The transitions every formatted state shares: the seed's lock table applies from "any" state. */
const formattedOn = {
  UNLOCK_RW: 'rw',
  UNLOCK_RO: 'ro',
  LOCK: 'locked',
  ERASED: 'unformatted',
} as const

/**
 * One embedded disk (P): unformatted until a format finishes, then locked (`-`), unlocked
 * read-only (`ro`) or read-write (`rw`). The host maps the token scope to the event
 * (`storage:disk<N>:rw` -> UNLOCK_RW, `storage:disk<N>` -> UNLOCK_RO); a wipeout or the start
 * of a reformat is ERASED. Events carry no data, so a replay of the journal's transition
 * records reaches the same state; the disk number is input, fixed for the actor's life.
 */
export const diskMachine = setup({
  types: {
    input: {} as { disk: DiskNumber },
    context: {} as { disk: DiskNumber },
    events: {} as
      { type: 'FORMATTED' } | { type: 'UNLOCK_RO' } | { type: 'UNLOCK_RW' } | { type: 'LOCK' } | { type: 'ERASED' },
  },
}).createMachine({
  id: 'disk',
  context: ({ input }) => ({ disk: checkedDisk(input.disk) }),
  initial: 'unformatted',
  states: {
    unformatted: { on: { FORMATTED: 'locked', ERASED: 'unformatted' } },
    locked: { on: formattedOn },
    ro: { on: formattedOn },
    rw: { on: formattedOn },
  },
})

export const diskVersion = 1

/**
 * The state a formatted disk takes at power-up (contract §6): Disk 0 as `storage_mode` bits
 * 0 (visible) and 1 (writable) say, writable meaning nothing unless visible; Disk 1 always
 * locked, since only a token may unlock the encrypted disk.
 */
export function bootMode(disk: DiskNumber, storageMode: number): 'locked' | DiskMode {
  checkedDisk(disk)
  const mode = checkedStorageMode(storageMode)
  if (disk === 1 || (mode & 0x01) === 0) return 'locked'
  return (mode & 0x02) === 0 ? 'ro' : 'rw'
}

/** The cipher that keeps Disk 1 encrypted at rest: the high nibble of `storage_mode`. */
export function disk1Cipher(storageMode: number): DiskCipher {
  return checkedStorageMode(storageMode) >> 4 === 0x5 ? 'AES-CTR' : 'AES-XTS'
}

function checkedDisk(disk: unknown): DiskNumber {
  if (disk !== 0 && disk !== 1) throw new RangeError('the disk number must be 0 or 1')
  return disk
}

/** A byte: cipher nibble 0x5 or 0xA, Disk 0 bits 0–1, bits 2–3 clear (they mean nothing). */
function checkedStorageMode(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xff) {
    throw new RangeError('storage_mode must be an integer from 0 to 0xff')
  }
  const cipher = value >> 4
  if (cipher !== 0x5 && cipher !== 0xa) {
    throw new RangeError('storage_mode names no Disk 1 cipher: its high nibble must be 0x5 (AES-CTR) or 0xA (AES-XTS)')
  }
  if ((value & 0x0c) !== 0) throw new RangeError('storage_mode bits 2 and 3 must be clear')
  return value
}
