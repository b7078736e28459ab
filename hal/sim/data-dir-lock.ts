import { randomBytes } from 'node:crypto'
import { link, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { HalLockedError } from '../errors.js'
import { errorCode } from './error-code.js'
import { isProcessAlive } from './process-alive.js'

/** Exclusive hold on a data dir: `hemd.lock` names the holder's pid; a lock whose process is gone is taken over. */
export class DataDirLock {
  #released = false

  private constructor(readonly path: string) {}

  static async acquire(dataDir: string): Promise<DataDirLock> {
    const path = join(dataDir, 'hemd.lock')
    for (;;) {
      if (await createPidFile(path)) return new DataDirLock(path)
      const holder = await readHolder(path)
      if (holder === undefined) continue
      const pid = pidOf(holder)
      if (isProcessAlive(pid)) throw new HalLockedError(dataDir, pid)
      await removeStale(path, holder)
    }
  }

  async release(): Promise<void> {
    if (this.#released) return
    this.#released = true
    const holder = await readHolder(this.path)
    if (holder !== undefined && pidOf(holder) === process.pid) await unlink(this.path).catch(ignoreMissing)
  }
}

/** Creates `path` holding our pid unless it exists; false when it does. */
async function createPidFile(path: string): Promise<boolean> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  // link() is as exclusive as O_EXCL but makes the file appear with its pid already in it,
  // so a competitor never reads an empty lock and mistakes it for a stale one.
  await writeFile(temp, `${process.pid}\n`, { mode: 0o600 })
  try {
    await link(temp, path)
    return true
  } catch (err) {
    if (errorCode(err) === 'EEXIST') return false
    throw err
  } finally {
    await unlink(temp).catch(ignoreMissing)
  }
}

// Two processes can find the same stale lock. Without the guard, the slower one could
// re-read the stale pid just before the faster one replaces the file, then delete the fresh lock.
async function removeStale(path: string, staleHolder: string): Promise<void> {
  const guard = `${path}.takeover`
  if (!(await createPidFile(guard))) {
    const guardHolder = await readHolder(guard)
    if (guardHolder !== undefined && !isProcessAlive(pidOf(guardHolder))) await unlink(guard).catch(ignoreMissing)
    await sleep(5)
    return
  }
  try {
    if ((await readHolder(path)) === staleHolder) await unlink(path).catch(ignoreMissing)
  } finally {
    await unlink(guard).catch(ignoreMissing)
  }
}

async function readHolder(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined
    throw err
  }
}

function pidOf(holder: string): number {
  return Number(holder.trim())
}

function ignoreMissing(err: unknown): void {
  if (errorCode(err) !== 'ENOENT') throw err
}
