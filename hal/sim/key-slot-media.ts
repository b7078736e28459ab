// Key slots as one sparse file `<dir>/slots-4096.bin`: slot i lives at i * slotSize, so a slot
// that was never written reads as zeros without taking space. On a full disk (the data dir's, see
// disk-space.ts) a write tears: the first half of the record lands over the slot, then ENOSPC.
//
// Slots were 512 bytes in `slots.bin` until ML-DSA-87 keys (a 2592-byte public key) needed more.
// Such a file is migrated before first use: slot i is copied to slot i of the new file (the seal
// binds the slot's index and header, not its size), which is written whole and renamed into
// place, then the old file is zeroed and removed. A crash before the rename leaves the old file
// as it was; a crash after it leaves both, and the next use only zeroes and removes the old one.

import { constants } from 'node:fs'
import { access, mkdir, open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { HalCorruptError } from '../errors.js'
import type { KeySlotMedia } from '../types.js'
import { syncDirectory, writeFileAtomic } from './atomic-file.js'
import { SimDiskSpace } from './disk-space.js'
import { exists } from './enclave-files.js'
import { errorCode } from './error-code.js'

/** The file of the current geometry, and that of the 512-byte slots it replaced. */
export const KEY_SLOT_FILE = 'slots-4096.bin'
const LEGACY = { file: 'slots.bin', slotSize: 512 } as const

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
  #migrated: Promise<void> | undefined

  constructor(
    dir: string,
    { slotCount = 1024, slotSize = 4096, space = new SimDiskSpace(dirname(dir)) }: KeySlotMediaOptions = {},
  ) {
    if (!Number.isSafeInteger(slotCount) || slotCount < 1) throw new RangeError('slotCount must be a positive integer')
    if (!Number.isSafeInteger(slotSize) || slotSize < 1) throw new RangeError('slotSize must be a positive integer')
    this.slotCount = slotCount
    this.slotSize = slotSize
    this.#dir = dir
    this.#path = join(dir, KEY_SLOT_FILE)
    this.#space = space
  }

  async readAll(): Promise<Uint8Array[]> {
    // Read straight into the slots' memory: at 4 MiB a second copy is most of a boot's cost here.
    return this.split(await this.read(0, this.slotCount * this.slotSize))
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const size = this.slotCount * this.slotSize
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0)
      throw new RangeError('a read of the key slots needs a whole offset and length')
    if (offset + length > size) throw new RangeError(`a read of the key slots must end within their ${size} bytes`)
    await this.migrated()
    const bytes = new Uint8Array(length)
    let file: FileHandle
    try {
      file = await open(this.#path, 'r')
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err
      return bytes
    }
    try {
      const { size: stored } = await file.stat()
      // Bytes past the last slot mean the file was made for another geometry: reading it as this
      // one would misplace every slot.
      if (stored > size)
        throw new HalCorruptError(
          `${this.#path} is ${stored} bytes, more than ${this.slotCount} slots of ${this.slotSize}`,
        )
      // What lies past the end of the (sparse) file was never written: zeros.
      const end = Math.min(length, stored - offset)
      for (let at = 0; at < end;) {
        const { bytesRead } = await file.read(bytes, at, end - at, offset + at)
        if (bytesRead === 0) break
        at += bytesRead
      }
    } finally {
      await file.close()
    }
    return bytes
  }

  private split(whole: Uint8Array): Uint8Array[] {
    return Array.from({ length: this.slotCount }, (_, i) => whole.subarray(i * this.slotSize, (i + 1) * this.slotSize))
  }

  async write(index: number, data: Uint8Array): Promise<void> {
    if (!Number.isInteger(index) || index < 0 || index >= this.slotCount) {
      throw new RangeError(`key slot index must be an integer from 0 to ${this.slotCount - 1}`)
    }
    if (!(data instanceof Uint8Array)) throw new TypeError('key slot data must be a Uint8Array')
    if (data.length > this.slotSize)
      throw new RangeError(`key slot data is ${data.length} bytes, more than the ${this.slotSize} of a slot`)
    await this.migrated()
    const slot = new Uint8Array(this.slotSize)
    slot.set(data)
    const file = await this.handle()
    // Torn inside the record, not in its zero padding: what lands is neither the old slot nor the new.
    await this.#space.write(file, slot, index * this.slotSize, this.#path, Math.floor(data.length / 2))
    await this.#space.datasync(file, this.#path)
  }

  async erase(): Promise<void> {
    await this.migrated()
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

  /** The legacy file migrated, once per media; a migration that failed is tried again on the next use. */
  private migrated(): Promise<void> {
    this.#migrated ??= this.migrate().catch((err: unknown) => {
      this.#migrated = undefined
      throw err
    })
    return this.#migrated
  }

  private async migrate(): Promise<void> {
    const legacy = join(this.#dir, LEGACY.file)
    let old: Buffer
    try {
      old = await readFile(legacy)
    } catch (err) {
      // No old file, or no directory yet (which the first write reports).
      if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR') return
      throw err
    }
    if (!(await exists(this.#path))) {
      if (this.slotSize < LEGACY.slotSize || old.length > this.slotCount * LEGACY.slotSize)
        throw new HalCorruptError(
          `${legacy} (${old.length} bytes) does not fit ${this.slotCount} slots of ${this.slotSize}`,
        )
      // A crash during an earlier attempt may have left its temporary file.
      for (const name of await readdir(this.#dir))
        if (name.startsWith(`${KEY_SLOT_FILE}.`) && name.endsWith('.tmp')) await unlink(join(this.#dir, name))
      const slots = Math.ceil(old.length / LEGACY.slotSize)
      const image = new Uint8Array(slots * this.slotSize)
      for (let i = 0; i < slots; i++)
        image.set(old.subarray(i * LEGACY.slotSize, (i + 1) * LEGACY.slotSize), i * this.slotSize)
      await writeFileAtomic(this.#path, image, 0o600)
    }
    // As erase does: the old blocks go back to the file system only once the sealed records are gone from them.
    const file = await open(legacy, 'r+')
    try {
      await this.#space.write(file, new Uint8Array(old.length), 0, legacy)
      await this.#space.datasync(file, legacy)
    } finally {
      await file.close()
    }
    await unlink(legacy)
    await syncDirectory(this.#dir)
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
