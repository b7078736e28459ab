// The simulated data disk running out of space. The state is a flag file, `<data>/sim/disk-full`,
// so that every process of the device sees it (with --split each service opens its own HAL on
// the same data dir). While it exists, every write of device state fails as on a full disk
// (ENOSPC), and as adversarially as a real one may: a write lands a prefix of its bytes before
// it fails, an fsync fails. Reads keep working; removing the flag gives the space back.

import { statSync } from 'node:fs'
import { mkdir, rm, stat, writeFile, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { errorCode } from './error-code.js'

const ENOSPC_ERRNO = -28

function flagPath(dataDir: string): string {
  return join(dataDir, 'sim', 'disk-full')
}

/** Fills the simulated data disk of `dataDir` (`full`), or gives its space back. */
export async function setSimDiskFull(dataDir: string, full: boolean): Promise<void> {
  const flag = flagPath(dataDir)
  if (!full) return rm(flag, { force: true })
  await mkdir(dirname(flag), { recursive: true, mode: 0o700 })
  await writeFile(flag, '')
}

/** What node's fs throws on a full disk, field for field, so that callers cannot tell it from a real one. */
export function noSpaceError(syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${syscall} '${path}'`), {
    errno: ENOSPC_ERRNO,
    code: 'ENOSPC',
    syscall,
    path,
  })
}

/**
 * The space of one data dir, as the stores under it write there. Checking costs one stat, made
 * synchronously: cheaper than a trip through the thread pool, and a write checked this way
 * starts in the tick it was asked in (a disk handle's close relies on that).
 */
export class SimDiskSpace {
  constructor(readonly dataDir: string) {}

  full(): boolean {
    return statSync(flagPath(this.dataDir), { throwIfNoEntry: false }) !== undefined
  }

  /** Throws ENOSPC for `syscall` on `path` while the disk is full: for calls that take space whole or not at all. */
  check(syscall: string, path: string): void {
    if (this.full()) throw noSpaceError(syscall, path)
  }

  /**
   * Writes all of `data` at `position` (null: at the file's offset, as O_APPEND does). On a full
   * disk the first `torn` bytes (default half) land and then the write fails, as a real write
   * torn by ENOSPC does.
   */
  async write(
    file: FileHandle,
    data: Uint8Array,
    position: number | null,
    path: string,
    torn = Math.floor(data.length / 2),
  ): Promise<void> {
    if (!this.full()) return writeAll(file, data, position)
    await writeAll(file, data.subarray(0, torn), position)
    throw noSpaceError('write', path)
  }

  /** fdatasync, which a full disk fails (delayed allocation finds no block for what was written). */
  async datasync(file: FileHandle, path: string): Promise<void> {
    this.check('fdatasync', path)
    await file.datasync()
  }
}

async function writeAll(file: FileHandle, data: Uint8Array, position: number | null): Promise<void> {
  let written = 0
  while (written < data.length) {
    const at = position === null ? null : position + written
    const { bytesWritten } = await file.write(data, written, data.length - written, at)
    written += bytesWritten
  }
}

/**
 * The space of the data dir that holds `path`: the nearest directory above it that holds a
 * device (`device.json`), a stat or three away for the files the HAL writes. Undefined outside a
 * device's data dir, and in one that holds no device yet: a first boot has no disk of its own to fill.
 */
export async function diskSpaceHolding(path: string): Promise<SimDiskSpace | undefined> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (await holdsDevice(dir)) return new SimDiskSpace(dir)
    if (dirname(dir) === dir) return undefined
  }
}

async function holdsDevice(dir: string): Promise<boolean> {
  try {
    return (await stat(join(dir, 'device.json'))).isFile()
  } catch (err) {
    if (errorCode(err) === 'ENOENT' || errorCode(err) === 'ENOTDIR' || errorCode(err) === 'EACCES') return false
    throw err
  }
}
