// Journal segments as files `<dir>/<id>.log`, each append made durable before it resolves. The
// directory lies in the data dir, whose simulated disk may be full: an append then lands a part
// of its bytes and fails (ENOSPC), which is what the journal's writer must cut back.

import { constants, createReadStream } from 'node:fs'
import { mkdir, open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { AppendHandle, JournalMedia } from '../types.js'
import { SimDiskSpace } from './disk-space.js'

const SEGMENT_ID = /^[0-9a-f]{8}$/
const SEGMENT_FILE = /^([0-9a-f]{8})\.log$/

class FileAppendHandle implements AppendHandle {
  constructor(
    private readonly file: FileHandle,
    private stored: number,
    private readonly path: string,
    private readonly space: SimDiskSpace,
  ) {}

  get size(): number {
    return this.stored
  }

  /** The file is opened O_DSYNC: each write returns once durable, one thread-pool hop instead of two. */
  async append(data: Uint8Array): Promise<void> {
    await this.space.write(this.file, data, null, this.path)
    this.stored += data.length
  }

  /** Works on a full disk too: cutting a file back frees space, it takes none. */
  async truncate(length: number): Promise<void> {
    await this.file.truncate(length)
    await this.file.datasync()
    this.stored = length
  }

  close(): Promise<void> {
    return this.file.close()
  }
}

export class FileJournalMedia implements JournalMedia {
  /** `dir` is a directory of the data dir, as the sim HAL lays it out; `space` is that data dir's. */
  constructor(
    private readonly dir: string,
    private readonly space = new SimDiskSpace(dirname(dir)),
  ) {}

  async list(): Promise<string[]> {
    let names: string[]
    try {
      names = await readdir(this.dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    return names.flatMap((name) => SEGMENT_FILE.exec(name)?.[1] ?? []).sort()
  }

  async read(id: string): Promise<Uint8Array> {
    return readFile(this.path(id))
  }

  async *stream(id: string, end?: number): AsyncIterable<Uint8Array> {
    const path = this.path(id)
    if (end === 0) return
    // createReadStream's `end` is inclusive.
    yield* createReadStream(path, end === undefined ? {} : { end: end - 1 })
  }

  async size(id: string): Promise<number | undefined> {
    try {
      return (await stat(this.path(id))).size
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }

  async readRange(id: string, start: number, length: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(start) || start < 0 || !Number.isSafeInteger(length) || length < 0)
      throw new RangeError('start and length must be whole numbers')
    const file = await open(this.path(id), 'r')
    try {
      const buffer = Buffer.alloc(length)
      const { bytesRead } = await file.read(buffer, 0, length, start)
      return new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead)
    } finally {
      await file.close()
    }
  }

  async open(id: string): Promise<AppendHandle> {
    const path = this.path(id)
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const file = await open(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC,
      // Group-readable: with --split as separate users, the logger and auth read what the eventstore writes.
      0o640,
    )
    try {
      const { size } = await file.stat()
      await this.syncDir()
      return new FileAppendHandle(file, size, path, this.space)
    } catch (err) {
      await file.close()
      throw err
    }
  }

  /** A new file is only durable once its directory entry is. */
  private async syncDir(): Promise<void> {
    const dir = await open(this.dir, 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }

  private path(id: string): string {
    if (!SEGMENT_ID.test(id)) throw new TypeError(`invalid journal segment id: ${JSON.stringify(id)}`)
    return join(this.dir, `${id}.log`)
  }
}
