import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { ImageKindName, StagedImage, StagingWriter, UpgradeStaging } from '../types.js'
import { SimDiskSpace } from './disk-space.js'
import { errorCode } from './error-code.js'

/**
 * `<data>/upgrade/<kind>.img`: an upload is written to `<kind>.part` and renamed over the
 * image only when complete and durable, so a crash mid-upload never leaves a staged image.
 * On a full disk (the data dir's, see disk-space.ts) nothing new is begun, and a running upload
 * fails at its next write or at its final fsync.
 */
export class SimUpgradeStaging implements UpgradeStaging {
  /** `dir` is a directory of the data dir, as the sim HAL lays it out; `space` is that data dir's. */
  constructor(
    private readonly dir: string,
    private readonly space = new SimDiskSpace(dirname(dir)),
  ) {}

  async begin(kind: ImageKindName): Promise<StagingWriter> {
    const part = this.path(kind, 'part')
    // Checked before the discard: an upload refused for want of space leaves the image staged before it.
    this.space.check('open', part)
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    await this.discard(kind)
    const file = await open(part, 'w', 0o600)
    return new SimStagingWriter(file, part, this.path(kind, 'img'), this.space)
  }

  async staged(kind: ImageKindName): Promise<StagedImage | undefined> {
    let file: FileHandle
    try {
      file = await open(this.path(kind, 'img'), 'r')
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return undefined
      throw err
    }
    const { size } = await file.stat()
    return {
      size,
      async read(position, length) {
        const bytes = Buffer.alloc(length)
        const { bytesRead } = await file.read(bytes, 0, length, position)
        if (bytesRead !== length) throw new RangeError(`the staged image ends before byte ${position + length}`)
        return bytes
      },
      close: () => file.close(),
    }
  }

  async discard(kind: ImageKindName): Promise<void> {
    await rm(this.path(kind, 'part'), { force: true })
    await rm(this.path(kind, 'img'), { force: true })
  }

  private path(kind: ImageKindName, suffix: 'part' | 'img'): string {
    if (kind !== 'fw' && kind !== 'ui') throw new RangeError("the image kind must be 'fw' or 'ui'")
    return join(this.dir, `${kind}.${suffix}`)
  }
}

class SimStagingWriter implements StagingWriter {
  #written = 0
  #open = true

  constructor(
    private readonly file: FileHandle,
    private readonly part: string,
    private readonly image: string,
    private readonly space: SimDiskSpace,
  ) {}

  get written(): number {
    return this.#written
  }

  async write(data: Uint8Array): Promise<void> {
    if (!this.#open) throw new Error('the upload is over')
    await this.space.write(this.file, data, this.#written, this.part)
    this.#written += data.length
  }

  async finish(): Promise<void> {
    this.#open = false
    try {
      await this.space.datasync(this.file, this.part)
    } finally {
      await this.file.close()
    }
    await rename(this.part, this.image)
  }

  async abort(): Promise<void> {
    if (this.#open) {
      this.#open = false
      await this.file.close()
    }
    await rm(this.part, { force: true })
  }
}
