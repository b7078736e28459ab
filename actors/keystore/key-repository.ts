// The key repository: key records sealed at rest in fixed media slots, checked at boot.
//
// The slots' format is key-slot.ts's.
//
// A live slot is never written over: a new key or version goes into a spare slot, and only a
// tombstone replaces a record. A write that fails (a full disk tears it, landing part of the
// record) therefore never loses a stored key. Memory does not follow a failed write: the slot
// is queued to be written again with what memory says it holds (zeros, or a tombstone) before
// the next change and at the next open. A torn slot that a reboot finds before it was mended
// does not open and is reported like any other damage.
//
// The slots are also one image, slot i at i * slotSize (the DIAG build's flash image): a record
// sits at its slot's address, and `verifyRecords` checks every slot of the media again as a boot
// would, so that damage done to the image since the boot is found while the device runs.

import type { KeySlotMedia, Sealer } from '../../hal/index.js'
import { DuplicateKeyError, RepositoryFullError, UnknownKeyError } from './errors.js'
import { decodeKeyRecord, encodeKeyRecord } from './key-record-codec.js'
import {
  aad,
  type Entry,
  HEADER,
  LENGTH_AT,
  readSlot,
  sameVersion,
  slotHeader,
  type SlotState,
  tombstone,
} from './key-slot.js'
import { readSlots, type ReadSlots } from './read-slots.js'
import { slotCounts } from './slot-counts.js'
import {
  type KeyLocation,
  type KeyRecord,
  type RepoStats,
  type SelfTestRepoStats,
  SerialQueue,
} from '../../protocol/index.js'

const DEVID = /^[0-9a-f]{16}$/

export interface KeyRepositoryOptions {
  media: KeySlotMedia
  sealer: Sealer
  /** The device's id, bound into every seal. */
  devid: string
}

export class KeyRepository {
  readonly #media: KeySlotMedia
  readonly #sealer: Sealer
  readonly #devid: string
  #states: SlotState[]
  #entries: Map<string, Entry>
  #problems: string[]
  /**
   * Slots whose bytes on the media are not yet what memory says they hold, and those bytes: written before the next
   * change.
   */
  #pending: Map<number, Uint8Array>
  #nextSerial: number
  readonly #queue = new SerialQueue()

  private constructor(options: KeyRepositoryOptions, read: ReadSlots) {
    this.#media = options.media
    this.#sealer = options.sealer
    this.#devid = options.devid
    this.#states = read.states
    this.#entries = read.entries
    this.#problems = read.problems
    this.#pending = new Map([...read.superseded].map((index) => [index, tombstone()]))
    this.#nextSerial = nextSerial(read.entries)
  }

  /**
   * Reads and checks every slot. Slots that do not check are counted as invalid and left alone
   * (evidence, never reused until `wipe`); older versions of an updated key are tombstoned.
   * A sealer that fails for another reason than altered data (UnsealError) fails the open.
   */
  static async open(options: KeyRepositoryOptions): Promise<KeyRepository> {
    const { media, devid } = options
    if (typeof devid !== 'string' || !DEVID.test(devid))
      throw new TypeError('devid must be 16 lowercase hex characters')
    if (!Number.isSafeInteger(media.slotCount) || media.slotCount < 1)
      throw new RangeError('the media has no key slots')
    if (!Number.isSafeInteger(media.slotSize) || media.slotSize <= HEADER || media.slotSize > HEADER + 0xffff) {
      throw new RangeError(`a key slot must be ${HEADER + 1} to ${HEADER + 0xffff} bytes`)
    }
    const slots = await media.readAll()
    if (slots.length !== media.slotCount || slots.some((slot) => slot.length !== media.slotSize)) {
      throw new RangeError(`the media did not return ${media.slotCount} slots of ${media.slotSize} bytes`)
    }
    const repository = new KeyRepository(options, await readSlots(slots, options))
    // A failed write stays pending: the next change writes it first, and so does the next open.
    await repository.#mend().catch(() => undefined)
    return repository
  }

  /** False when a slot did not check at boot, or two slots held the same version of a key. */
  get intact(): boolean {
    return this.#problems.length === 0
  }

  /** What did not check at boot, one line per slot: its index and the fault, never key bytes. */
  get problems(): readonly string[] {
    return [...this.#problems]
  }

  /** The stored keys, oldest first (creation order survives updates and reboots). */
  keys(): Readonly<KeyRecord>[] {
    return [...this.#entries.values()].sort((a, b) => a.serial - b.serial).map((entry) => entry.record)
  }

  get(kid: string): Readonly<KeyRecord> | undefined {
    return this.#entries.get(kid)?.record
  }

  has(kid: string): boolean {
    return this.#entries.has(kid)
  }

  /** `repo_stats` of the status read model: the slots in use, and the share of them deleted. */
  stats(): RepoStats {
    const { total, deleted, invalid, free } = slotCounts(this.#states)
    return {
      total,
      deleted,
      invalid,
      freeespace: free,
      fragmentation: total === 0 ? 0 : Math.floor((deleted * 100) / total),
    }
  }

  /** `repo_stats` of the self-test (crypto-contract §5): the slots of the image by what memory says they hold. */
  selfTestStats(): SelfTestRepoStats {
    const { total, deleted, invalid, free, fragmented } = slotCounts(this.#states)
    return { total, deleted, invalid, fragmented, freeslots: free }
  }

  /** Bytes of the image: every slot, end to end. */
  get imageSize(): number {
    return this.#media.slotCount * this.#media.slotSize
  }

  /** Where a stored key's record sits in the image; undefined for a KID not stored. */
  location(kid: string): KeyLocation | undefined {
    const entry = this.#entries.get(kid)
    return entry && { _addr: entry.index * this.#media.slotSize, _len: entry.length }
  }

  /**
   * `length` bytes of the image from `address`, read from the media as they are now (not what
   * memory holds): sealed records, tombstones and zeros. RangeError outside the image.
   */
  readImage(address: number, length: number): Promise<Uint8Array> {
    return this.#serialised(() => this.#media.read(address, length))
  }

  /**
   * Zeroes the image's bytes `address + 4` to `address + 7` on the media, and nothing in memory:
   * at a record's address its generation, which is never zero and which the seal binds, so the
   * record no longer checks. For fault drills (the DIAG build). RangeError outside the image.
   */
  damageImage(address: number): Promise<void> {
    return this.#serialised(async () => {
      const { slotSize } = this.#media
      if (!Number.isSafeInteger(address) || address < 0 || address >= this.imageSize)
        throw new RangeError(`the address must lie within the image's ${this.imageSize} bytes`)
      const end = Math.min(address + 8, this.imageSize)
      // Slot by slot, as the media writes whole slots: the four bytes span two only where a slot is not 32-aligned.
      for (let at = address + 4; at < end; at = (Math.floor(at / slotSize) + 1) * slotSize) {
        const index = Math.floor(at / slotSize)
        const slot = await this.#media.read(index * slotSize, slotSize)
        slot.fill(0, at - index * slotSize, Math.min(end - index * slotSize, slotSize))
        await this.#media.write(index, slot)
      }
    })
  }

  /**
   * Reads every slot of the media again and checks it as `open` does. A slot that held a key and
   * no longer checks (or holds another record than memory's) is invalid from now on and its key
   * leaves memory, as the next boot would find it; so does any other slot whose bytes are no longer
   * what memory says. Slots with a write pending are left to it. Answers what newly failed, one
   * line per slot as `problems` has them (also added there); `invalidated` hears each key that left.
   */
  verifyRecords(invalidated: (kid: string) => void = () => undefined): Promise<string[]> {
    return this.#serialised(async () => {
      const slots = await this.#media.readAll()
      const stored = new Map([...this.#entries.values()].map((entry) => [entry.index, entry]))
      const failed: string[] = []
      for (const [index, bytes] of slots.entries()) {
        const state = this.#states[index]
        if (state === 'invalid' || this.#pending.has(index)) continue
        const found = await readSlot(bytes, index, this.#sealer, this.#devid)
        const held = stored.get(index)
        const problem =
          found.state === 'invalid'
            ? found.problem
            : found.state !== state
              ? `reads as ${found.state} where it was ${state}`
              : found.state === 'live' && !sameVersion(found.entry, held)
                ? 'holds another record than the one stored there'
                : undefined
        if (found.state === 'live') forget(found.entry.record)
        if (problem === undefined) continue
        this.#states[index] = 'invalid'
        if (held) {
          this.#entries.delete(held.record.kid)
          forget(held.record)
          invalidated(held.record.kid)
        }
        failed.push(`slot ${index}: ${problem}`)
      }
      this.#problems.push(...failed)
      return failed
    })
  }

  /** Whether a new key, or a new version of one, has a slot to go to: one free, or one deleted. */
  hasRoom(): boolean {
    return this.#states.some((state) => state === 'free' || state === 'deleted')
  }

  /** Stores a new key. DuplicateKeyError for a known KID, RepositoryFullError when no slot is left. */
  add(record: KeyRecord): Promise<void> {
    return this.#serialised(async () => {
      const plaintext = encodeKeyRecord(record)
      try {
        if (this.#entries.has(record.kid)) throw new DuplicateKeyError(record.kid)
        await this.#mend()
        await this.#store(plaintext, 1, this.#nextSerial)
        this.#nextSerial += 1
      } finally {
        // The record in clear, key material included: only the sealed copy and memory's own stay.
        plaintext.fill(0)
      }
    })
  }

  /**
   * Stores a new version of a key: first in another slot, then the old slot is tombstoned, so a
   * crash in between leaves both and the next open keeps the newer. It needs a spare slot
   * (RepositoryFullError). UnknownKeyError when the KID is not stored.
   */
  replace(record: KeyRecord): Promise<void> {
    return this.#serialised(async () => {
      const old = this.#entries.get(record.kid)
      if (!old) throw new UnknownKeyError(record.kid)
      const plaintext = encodeKeyRecord(record)
      try {
        await this.#mend()
        await this.#store(plaintext, old.generation + 1, old.serial)
      } finally {
        plaintext.fill(0)
      }
      // The new version is durable: the update has happened. Should the tombstone fail, the
      // old slot still counts as deleted and is retried before the next change (or by open).
      this.#states[old.index] = 'deleted'
      this.#pending.set(old.index, tombstone())
      forget(old.record)
      await this.#mend().catch(() => undefined)
    })
  }

  /**
   * Deletes a key, overwriting its sealed bytes; false when the KID is not stored. Should a
   * write fail (an earlier failed write, written first, or the tombstone), the key is gone all
   * the same (callers journaled its end, or never its start) and the tombstone is retried
   * before the next change; the failure is thrown.
   */
  remove(kid: string): Promise<boolean> {
    return this.#serialised(async () => {
      const entry = this.#entries.get(kid)
      if (!entry) return false
      this.#states[entry.index] = 'deleted'
      this.#entries.delete(kid)
      forget(entry.record)
      this.#pending.set(entry.index, tombstone())
      await this.#mend()
      return true
    })
  }

  /**
   * Writes what failed writes left pending, as the next change would first; throws while the
   * media still refuses. Before a reboot it spares the next open a torn slot it would report.
   */
  mend(): Promise<void> {
    return this.#serialised(() => this.#mend())
  }

  /** Erases the media: every key, tombstone and invalid slot is gone. */
  wipe(): Promise<void> {
    return this.#serialised(async () => {
      await this.#media.erase()
      this.#states = this.#states.map(() => 'free')
      for (const entry of this.#entries.values()) forget(entry.record)
      this.#entries = new Map()
      this.#problems = []
      this.#pending = new Map()
      this.#nextSerial = 1
    })
  }

  /** Seals `plaintext` into a free slot (else a deleted one); memory changes only once it is durable. */
  async #store(plaintext: Uint8Array, generation: number, serial: number): Promise<void> {
    const index = this.#spareSlot()
    const header = slotHeader(generation, serial)
    const sealed = await this.#sealer.seal(plaintext, aad(this.#devid, index, header))
    if (HEADER + sealed.length > this.#media.slotSize) throw new RangeError('the sealed key record does not fit a slot')
    const slot = new Uint8Array(HEADER + sealed.length)
    slot.set(header)
    new DataView(slot.buffer).setUint16(LENGTH_AT, sealed.length)
    slot.set(sealed, HEADER)
    try {
      await this.#media.write(index, slot)
    } catch (err) {
      // The slot may hold a part of the record now: it is put back to what it was.
      this.#pending.set(index, this.#states[index] === 'free' ? new Uint8Array(0) : tombstone())
      throw err
    }
    const record = decodeKeyRecord(plaintext)
    this.#states[index] = 'live'
    this.#entries.set(record.kid, { index, generation, serial, length: slot.length, record })
  }

  #spareSlot(): number {
    const free = this.#states.indexOf('free')
    if (free >= 0) return free
    const deleted = this.#states.indexOf('deleted')
    if (deleted >= 0) return deleted
    throw new RepositoryFullError()
  }

  /** Writes what the pending slots must hold, in slot order; stops at the first write that fails. */
  async #mend(): Promise<void> {
    for (const [index, bytes] of [...this.#pending].sort(([a], [b]) => a - b)) {
      await this.#media.write(index, bytes)
      this.#pending.delete(index)
    }
  }

  /** One change at a time: each sees the state the one before it left. */
  #serialised<T>(operation: () => Promise<T>): Promise<T> {
    return this.#queue.run(operation)
  }
}

/**
 * Wipes the secret of a record memory no longer holds. Its users are done with it: crypto
 * operations use a record without yielding, and derive, which yields, runs apart from changes.
 */
function forget(record: KeyRecord): void {
  record.secret?.fill(0)
}

function nextSerial(entries: Map<string, Entry>): number {
  let last = 0
  for (const entry of entries.values()) last = Math.max(last, entry.serial)
  return last + 1
}
