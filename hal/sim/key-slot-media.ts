// Key slots as one sparse file `<dir>/slots.bin`: slot i lives at i * slotSize, so a slot that
// was never written reads as zeros without taking space. On a full disk (the data dir's, see
// disk-space.ts) a write tears: the first half of the record lands over the slot, then ENOSPC.

import { constants } from 'node:fs'
import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { HalCorruptError } from '../errors.js'
import type { KeySlotMedia } from '../types.js'
import { syncDirectory } from './atomic-file.js'
import { SimDiskSpace } from './disk-space.js'
import { errorCode } from './error-code.js'

export interface KeySlotGeometry {
  slotCount?: number
  slotSize?: number
}

export interface KeySlotMediaOptions extends KeySlotGeometry {
  /** The space of the data dir the slots live in; default that of `dir`'s parent, as the sim HAL lays it out. */
  space?: SimDiskSpace
}

export class FileKeySlotMedia implements KeySlotMedia {
  readonly slotCount: number
  readonly slotSize: number
  readonly #dir: string
  readonly #path: string
  readonly #space: SimDiskSpace
  #file: Promise<FileHandle> | undefined

  constructor(
    dir: string,
    { slotCount = 1024, slotSize = 512, space = new SimDiskSpace(dirname(dir)) }: KeySlotMediaOptions = {},
  ) {
    if (!Number.isSafeInteger(slotCount) || slotCount < 1) throw new RangeError('slotCount must be a positive integer')
    if (!Number.isSafeInteger(slotSize) || slotSize < 1) throw new RangeError('slotSize must be a positive integer')
    this.slotCount = slotCount
    this.slotSize = slotSize
    this.#dir = dir
    this.#path = join(dir, 'slots.bin')
    this.#space = space
  }

  async readAll(): Promise<Uint8Array[]> {
    let stored: Buffer
    try {
      stored = await readFile(this.#path)
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err
      stored = Buffer.alloc(0)
    }
    const size = this.slotCount * this.slotSize
    // Bytes past the last slot mean the file was made for another geometry: reading it as this
    // one would misplace every slot.
    if (stored.length > size)
      throw new HalCorruptError(
        `${this.#path} is ${stored.length} bytes, more than ${this.slotCount} slots of ${this.slotSize}`,
      )
    const whole = new Uint8Array(size)
    whole.set(stored)
    return Array.from({ length: this.slotCount }, (_, i) => whole.subarray(i * this.slotSize, (i + 1) * this.slotSize))
  }

  async write(index: number, data: Uint8Array): Promise<void> {
    if (!Number.isInteger(index) || index < 0 || index >= this.slotCount) {
      throw new RangeError(`key slot index must be an integer from 0 to ${this.slotCount - 1}`)
    }
    if (!(data instanceof Uint8Array)) throw new TypeError('key slot data must be a Uint8Array')
    if (data.length > this.slotSize)
      throw new RangeError(`key slot data is ${data.length} bytes, more than the ${this.slotSize} of a slot`)
    const slot = new Uint8Array(this.slotSize)
    slot.set(data)
    const file = await this.handle()
    // Torn inside the record, not in its zero padding: what lands is neither the old slot nor the new.
    await this.#space.write(file, slot, index * this.slotSize, this.#path, Math.floor(data.length / 2))
    await this.#space.datasync(file, this.#path)
  }

  async erase(): Promise<void> {
    const file = await this.handle()
    const { size } = await file.stat()
    // Truncating alone would hand the old blocks back to the file system with the sealed keys
    // still in them; overwrite first, then drop the length.
    if (size > 0) {
      await this.#space.write(file, new Uint8Array(size), 0, this.#path)
      await this.#space.datasync(file, this.#path)
    }
    await file.truncate(0)
    await file.datasync()
  }

  async close(): Promise<void> {
    const file = this.#file
    this.#file = undefined
    await file?.then(
      (handle) => handle.close(),
      () => undefined,
    )
  }

  private handle(): Promise<FileHandle> {
    this.#file ??= this.openFile().catch((err: unknown) => {
      this.#file = undefined
      throw err
    })
    return this.#file
  }

  private async openFile(): Promise<FileHandle> {
    const created = await mkdir(this.#dir, { recursive: true, mode: 0o700 })
    // Not 'a': in append mode Linux ignores the position of every write.
    const file = await open(this.#path, constants.O_RDWR | constants.O_CREAT, 0o600)
    try {
      // A new file (and a new directory) is only durable once its directory entry is.
      await syncDirectory(this.#dir)
      if (created !== undefined) await syncDirectory(dirname(created))
      return file
    } catch (err) {
      await file.close()
      throw err
    }
  }
}
