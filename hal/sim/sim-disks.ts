import { createCipheriv, createDecipheriv } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import {
  DiskLockedError,
  DiskNotFormattedError,
  DiskReadOnlyError,
  FormatCancelledError,
  HalCorruptError,
  HalError,
} from '../errors.js'
import type { DiskCipher, DiskHandle, DiskLayout, DiskMode, DiskStore, EntropySource, Sealer } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { SimDiskSpace } from './disk-space.js'
import { errorCode } from './error-code.js'
import { holdFormatAt } from './format-hold.js'

/**
 * Group-writable: with --split as separate users, the auth process formats the disks and the
 * storage process (its group) opens them. The data dir around them lets nobody else in.
 */
const DISK_FILE_MODE = 0o660

const SECTOR = 512
/** The start of each disk that a format really writes (zeros), so that formatting takes its time. */
const FORMATTED_HEAD = 1024 * 1024
const STEPS = 4
/** Sectors one read or write may move: bounds the memory a single call takes. */
const MAX_IO_SECTORS = 2048
const DISK_KEY = 'disk1.key'
const DISK_KEY_BYTES = 64
/** Binds the sealed disk key to its purpose: no other sealed blob of the enclave opens as it. */
const DISK_KEY_AAD = Buffer.from('hemd disk1 key v1')
const ZERO_SECTOR = Buffer.alloc(SECTOR)

/** What the disks need of the enclave: it seals Disk 1's key, which never rests in the clear. */
export type DiskKeySealer = Sealer

/**
 * The two embedded disks as sparse image files under `<data>/disks`: sector N of Disk D is
 * bytes [N*512, N*512+512) of `disk<D>.img`. `layout.json` is written only when a format has
 * finished, so a format cut short leaves the disks unformatted. It is read on every question:
 * with `--split` another process may have formatted meanwhile.
 *
 * Disk 0 holds its sectors as written. Disk 1 holds each sector encrypted under a random
 * 64-byte key made at format time and kept in `disk1.key`, sealed by the enclave. The
 * sparse-zero convention: a stored sector of all zeros was never written (a hole, or the
 * zeros of a format) and reads as zeros; every sector a user writes is stored encrypted, zeros
 * included, so the image never holds what the user wrote. (A ciphertext that is all zeros
 * has probability 2^-4096.) The image shows which sectors were ever written, not what they hold.
 *
 * The images live in the data dir, whose simulated disk may be full (disk-space.ts): a format is
 * then refused before it changes anything, and a sector write fails after half its sectors land.
 * A format can be held at a point of its course (format-hold.ts), to cut the power or stop there.
 */
export class SimDisks implements DiskStore {
  readonly #handles = new Set<SimDiskHandle>()
  /** Format, erase and open run one at a time: an open must not straddle the bytes changing under it. */
  #queue: Promise<unknown> = Promise.resolve()

  /** `dir` is a directory of the data dir, as the sim HAL lays it out; `space` is that data dir's. */
  constructor(
    private readonly dir: string,
    private readonly capacitySectors: number,
    private readonly reservedSectors: number,
    private readonly sealer: DiskKeySealer,
    private readonly entropy: EntropySource,
    private readonly space = new SimDiskSpace(dirname(dir)),
  ) {}

  layout(): DiskLayout | undefined {
    return readLayout(join(this.dir, 'layout.json'))
  }

  async format(disk0Sectors: number, onProgress: (percent: number) => void, signal?: AbortSignal): Promise<void> {
    const disk1Sectors = this.capacitySectors - this.reservedSectors - disk0Sectors
    if (
      !Number.isSafeInteger(disk0Sectors) ||
      disk0Sectors * SECTOR < FORMATTED_HEAD ||
      disk1Sectors * SECTOR < FORMATTED_HEAD
    ) {
      throw new HalError(`a Disk 0 of ${disk0Sectors} sectors does not fit the card`)
    }
    if (typeof onProgress !== 'function') throw new TypeError('onProgress must be a function')
    return this.serially(() => this.reformat(disk0Sectors, disk1Sectors, onProgress, signal))
  }

  erase(): Promise<void> {
    return this.serially(async () => {
      await this.lockAll()
      // What is in it, not the directory: its owner and mode are the device's, not this process's to make again.
      const names = await readdir(this.dir).catch((err: unknown) => {
        if (errorCode(err) === 'ENOENT') return []
        throw err
      })
      for (const name of names) await rm(join(this.dir, name), { recursive: true, force: true })
    })
  }

  async open(disk: 0 | 1, mode: DiskMode, cipher?: DiskCipher): Promise<DiskHandle> {
    if (disk !== 0 && disk !== 1) throw new RangeError('the disk number must be 0 or 1')
    if (mode !== 'ro' && mode !== 'rw') throw new RangeError("the mode must be 'ro' or 'rw'")
    if (disk === 0 && cipher !== undefined) throw new RangeError('Disk 0 is not encrypted: it takes no cipher')
    if (disk === 1 && cipher !== 'AES-CTR' && cipher !== 'AES-XTS')
      throw new RangeError("Disk 1 needs its cipher: 'AES-CTR' or 'AES-XTS'")
    return this.serially(() => this.unlock(disk, mode, cipher))
  }

  private async reformat(
    disk0Sectors: number,
    disk1Sectors: number,
    onProgress: (percent: number) => void,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const { dataDir } = this.space
    // Between steps, never within one: what a step wrote is whole when the format stops.
    const go = () => {
      if (signal?.aborted) throw new FormatCancelledError({ cause: signal.reason })
    }
    await holdFormatAt(dataDir, 'start', signal)
    go()
    // Before the layout goes: a format refused for want of space leaves the disks as they were.
    this.space.check('open', join(this.dir, DISK_KEY))
    await this.lockAll()
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    await rm(join(this.dir, 'layout.json'), { force: true })
    // The new key replaces the old one before anything else: from here on the old Disk 1 bytes are noise.
    const key = this.entropy.read(DISK_KEY_BYTES)
    try {
      await writeFileAtomic(join(this.dir, DISK_KEY), await this.sealer.seal(key, DISK_KEY_AAD), DISK_FILE_MODE)
    } finally {
      key.fill(0)
    }
    const layout = { disk0Sectors, disk1Sectors }
    let step = 0
    for (const [index, sectors] of [disk0Sectors, disk1Sectors].entries()) {
      // 'w' truncates: the image starts as one hole, all zeros by the sparse-zero convention.
      const path = join(this.dir, `disk${index}.img`)
      const image = await open(path, 'w', DISK_FILE_MODE)
      try {
        await image.truncate(sectors * SECTOR)
        const half = Buffer.alloc(FORMATTED_HEAD / 2)
        for (let offset = 0; offset < FORMATTED_HEAD; offset += half.length) {
          await this.space.write(image, half, offset, path)
          this.space.check('fsync', path)
          await image.sync()
          onProgress(Math.round((++step * 100) / STEPS))
          go()
        }
      } finally {
        await image.close()
      }
      if (index === 0) {
        await holdFormatAt(dataDir, 'middle', signal)
        go()
      }
    }
    await writeFileAtomic(join(this.dir, 'layout.json'), JSON.stringify(layout), DISK_FILE_MODE)
    // Complete: a cancel from here on changes nothing, and the format returns as finished.
    await holdFormatAt(dataDir, 'end', signal)
  }

  private async unlock(disk: 0 | 1, mode: DiskMode, cipher: DiskCipher | undefined): Promise<DiskHandle> {
    const layout = this.layout()
    if (!layout) throw new DiskNotFormattedError()
    const sectors = disk === 0 ? layout.disk0Sectors : layout.disk1Sectors
    const sectorCipher = cipher === undefined ? undefined : new SectorCipher(cipher, await this.diskKey())
    const path = join(this.dir, `disk${disk}.img`)
    const file = await openImage(path, mode, disk, sectors).catch((err: unknown) => {
      sectorCipher?.destroy()
      throw err
    })
    const handle = new SimDiskHandle(disk, sectors, mode, file, sectorCipher, { path, space: this.space }, () =>
      this.#handles.delete(handle),
    )
    this.#handles.add(handle)
    return handle
  }

  // The one place not on protocol/'s SerialQueue: hal/ imports nothing of ours, so it keeps this chain.
  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** Format and erase lock every disk first: a handle must not outlive the bytes it reads. */
  private async lockAll(): Promise<void> {
    await Promise.all([...this.#handles].map((handle) => handle.close()))
  }

  private async diskKey(): Promise<Buffer> {
    let sealed: Buffer
    try {
      sealed = await readFile(join(this.dir, DISK_KEY))
    } catch (err) {
      if (errorCode(err) === 'ENOENT') throw new HalCorruptError('the Disk 1 key is missing; format the disks again')
      throw err
    }
    let key: Uint8Array
    try {
      key = await this.sealer.unseal(sealed, DISK_KEY_AAD)
    } catch (err) {
      throw new HalCorruptError('the Disk 1 key does not unseal; format the disks again', { cause: err })
    }
    if (key.length !== DISK_KEY_BYTES)
      throw new HalCorruptError(`the Disk 1 key is not ${DISK_KEY_BYTES} bytes; format the disks again`)
    return Buffer.from(key.buffer, key.byteOffset, key.length)
  }
}

async function openImage(path: string, mode: DiskMode, disk: 0 | 1, sectors: number): Promise<FileHandle> {
  let file: FileHandle
  try {
    file = await open(path, mode === 'rw' ? 'r+' : 'r')
  } catch (err) {
    if (errorCode(err) === 'ENOENT')
      throw new HalCorruptError(`the image of Disk ${disk} is missing; format the disks again`)
    throw err
  }
  try {
    if ((await file.stat()).size !== sectors * SECTOR) {
      throw new HalCorruptError(`the image of Disk ${disk} does not match the layout; format the disks again`)
    }
  } catch (err) {
    await file.close()
    throw err
  }
  return file
}

/**
 * One unlocked disk. Every check and the start of the file operation happen in the same tick,
 * so a concurrent close (which waits for started operations) never cuts an operation short.
 */
class SimDiskHandle implements DiskHandle {
  #file: FileHandle | undefined
  #closing: Promise<void> | undefined

  constructor(
    readonly disk: 0 | 1,
    readonly sectors: number,
    readonly mode: DiskMode,
    file: FileHandle,
    private readonly cipher: SectorCipher | undefined,
    private readonly image: { path: string; space: SimDiskSpace },
    private readonly onClose: () => void,
  ) {
    this.#file = file
  }

  get locked(): boolean {
    return this.#file === undefined
  }

  async read(sector: number, count: number): Promise<Uint8Array> {
    const file = this.unlocked()
    this.checkRange(sector, count)
    const bytes = Buffer.alloc(count * SECTOR)
    const { bytesRead } = await file.read(bytes, 0, bytes.length, sector * SECTOR)
    if (bytesRead !== bytes.length)
      throw new HalCorruptError(`the image of Disk ${this.disk} is shorter than its layout`)
    const { cipher } = this
    if (cipher) {
      // Locked while the bytes were read: the key is gone, and so is the right to read.
      this.unlocked()
      for (let i = 0; i < count; i++) {
        const stored = bytes.subarray(i * SECTOR, (i + 1) * SECTOR)
        if (!stored.equals(ZERO_SECTOR)) cipher.decrypt(sector + i, stored).copy(stored)
      }
    }
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)
  }

  async write(sector: number, data: Uint8Array): Promise<void> {
    const file = this.unlocked()
    if (this.mode !== 'rw') throw new DiskReadOnlyError(this.disk)
    if (!(data instanceof Uint8Array)) throw new TypeError('the data must be a Uint8Array')
    if (data.length === 0 || data.length % SECTOR !== 0) throw new RangeError('the data must be whole 512-byte sectors')
    const count = data.length / SECTOR
    this.checkRange(sector, count)
    const plain = Buffer.from(data.buffer, data.byteOffset, data.length)
    const { cipher } = this
    const stored = cipher
      ? Buffer.concat(
          Array.from({ length: count }, (_, i) =>
            cipher.encrypt(sector + i, plain.subarray(i * SECTOR, (i + 1) * SECTOR)),
          ),
        )
      : plain
    // A write torn by a full disk lands whole sectors, as a block device's does.
    await this.image.space.write(file, stored, sector * SECTOR, this.image.path, Math.floor(count / 2) * SECTOR)
  }

  async flush(): Promise<void> {
    const file = this.unlocked()
    if (this.mode === 'rw') await this.image.space.datasync(file, this.image.path)
  }

  close(): Promise<void> {
    this.#closing ??= this.lock()
    return this.#closing
  }

  private async lock(): Promise<void> {
    const file = this.#file!
    this.#file = undefined
    this.onClose()
    this.cipher?.destroy()
    try {
      if (this.mode === 'rw') await file.datasync()
    } finally {
      await file.close()
    }
  }

  private unlocked(): FileHandle {
    if (!this.#file) throw new DiskLockedError(this.disk)
    return this.#file
  }

  private checkRange(sector: number, count: number): void {
    if (!Number.isSafeInteger(sector) || sector < 0) throw new RangeError('the sector must be a non-negative integer')
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_IO_SECTORS) {
      throw new RangeError(`the sector count must be an integer from 1 to ${MAX_IO_SECTORS}`)
    }
    if (sector + count > this.sectors) throw new RangeError(`the sectors lie past the end of Disk ${this.disk}`)
  }
}

/**
 * Disk 1's sector cipher: each sector is encrypted on its own, so any sector can be read
 * without its neighbours. AES-256-XTS (IEEE 1619) takes the whole 64-byte key with the sector
 * number as its tweak (16 bytes, little-endian). AES-256-CTR takes the first 32 bytes, and the
 * counter of sector N starts at N*32 (big-endian), a sector being 32 blocks, so no two sectors
 * share a counter block; a sector rewritten in CTR reuses its key stream, which XTS avoids.
 */
class SectorCipher {
  constructor(
    private readonly cipher: DiskCipher,
    private readonly key: Buffer,
  ) {}

  encrypt(sector: number, plain: Buffer): Buffer {
    const engine =
      this.cipher === 'AES-XTS'
        ? createCipheriv('aes-256-xts', this.key, xtsTweak(sector))
        : createCipheriv('aes-256-ctr', this.ctrKey(), ctrCounter(sector))
    return Buffer.concat([engine.update(plain), engine.final()])
  }

  decrypt(sector: number, stored: Buffer): Buffer {
    const engine =
      this.cipher === 'AES-XTS'
        ? createDecipheriv('aes-256-xts', this.key, xtsTweak(sector))
        : createDecipheriv('aes-256-ctr', this.ctrKey(), ctrCounter(sector))
    return Buffer.concat([engine.update(stored), engine.final()])
  }

  /** The key leaves memory with the handle: a locked disk keeps nothing to read it with. */
  destroy(): void {
    this.key.fill(0)
  }

  private ctrKey(): Buffer {
    return this.key.subarray(0, 32)
  }
}

function xtsTweak(sector: number): Buffer {
  const tweak = Buffer.alloc(16)
  tweak.writeBigUInt64LE(BigInt(sector), 0)
  return tweak
}

function ctrCounter(sector: number): Buffer {
  const counter = Buffer.alloc(16)
  counter.writeBigUInt64BE(BigInt(sector) * BigInt(SECTOR / 16), 8)
  return counter
}

function readLayout(path: string): DiskLayout | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined
    throw err
  }
  const layout = JSON.parse(text) as DiskLayout
  if (!Number.isSafeInteger(layout.disk0Sectors) || !Number.isSafeInteger(layout.disk1Sectors)) {
    throw new HalCorruptError(`${path} is corrupt; format the disks again`)
  }
  return layout
}
