import { randomBytes } from 'node:crypto'
import { link, open, rename, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { diskSpaceHolding } from './disk-space.js'

/** Replaces `path` with `data` so that a crash leaves either the old or the new file, never a torn one. */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const temp = await writeTemp(path, data, mode)
  await rename(temp, path)
  await syncDirectory(dirname(path))
}

/**
 * Creates `path` with `data`, whole or not at all; throws EEXIST
 * when it exists, even if another process made it a moment ago.
 */
export async function writeFileOnce(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const temp = await writeTemp(path, data, mode)
  try {
    await link(temp, path)
  } finally {
    await unlink(temp)
  }
  await syncDirectory(dirname(path))
}

/** The new bytes in a temporary file beside `path`; a write that fails (a full disk) leaves no temporary behind. */
async function writeTemp(path: string, data: string | Uint8Array, mode: number): Promise<string> {
  const space = await diskSpaceHolding(path)
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  const file = await open(temp, 'wx', mode)
  try {
    if (space) await space.write(file, bytes, 0, temp)
    else await file.writeFile(bytes)
    await file.sync()
  } catch (err) {
    await file.close()
    await unlink(temp).catch(() => undefined)
    throw err
  }
  await file.close()
  return temp
}

/** Makes renames and removals in `dir` durable: they are only once the directory entry is. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
