import { randomBytes } from 'node:crypto'
import { open, rename, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'

/** Replaces `path` with `data` so that a crash leaves either the old or the new file, never a torn one. */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const file = await open(temp, 'wx', mode)
  try {
    await file.writeFile(data)
    await file.sync()
  } catch (err) {
    await file.close()
    await unlink(temp).catch(() => undefined)
    throw err
  }
  await file.close()
  await rename(temp, path)
  await syncDirectory(dirname(path))
}

// The rename itself is only durable once the directory entry is.
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
