import { mkdir, readdir, rename, rm } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { WebrootStore } from '../types.js'
import { writeFileAtomic } from './atomic-file.js'
import { SimDiskSpace } from './disk-space.js'
import { errorCode } from './error-code.js'

const CURRENT = 'current.json'
const SHA256 = /^[0-9a-f]{64}$/

/**
 * `<data>/webroot/<sha256>/`, one directory per installed app, and `current.json` naming the
 * one served. A new app is unpacked beside the old and `current.json` is replaced atomically,
 * so a request sees one app or the other, never a mixture; the old directory goes after.
 * On a full disk (the data dir's, see disk-space.ts) an install is refused before it unpacks.
 */
export class SimWebrootStore implements WebrootStore {
  /** `dir` is a directory of the data dir, as the sim HAL lays it out; `space` is that data dir's. */
  constructor(
    private readonly dir: string,
    private readonly space = new SimDiskSpace(dirname(dir)),
  ) {}

  current(): { dir: string; sha256: string } | undefined {
    let text: string
    try {
      text = readFileSync(join(this.dir, CURRENT), 'utf8')
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return undefined
      throw err
    }
    const { sha256 } = JSON.parse(text) as { sha256?: unknown }
    if (typeof sha256 !== 'string' || !SHA256.test(sha256)) return undefined
    return { dir: join(this.dir, sha256), sha256 }
  }

  async install(extract: (dir: string) => Promise<void>, sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) throw new RangeError('sha256 must be 64 lowercase hex digits')
    const target = join(this.dir, sha256)
    const fresh = `${target}.new`
    this.space.check('mkdir', fresh)
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    await rm(fresh, { recursive: true, force: true })
    try {
      await extract(fresh)
    } catch (err) {
      // An unpack cut short is no app: nothing of it stays to be mistaken for one.
      await rm(fresh, { recursive: true, force: true })
      throw err
    }
    if (this.current()?.sha256 !== sha256) {
      await rm(target, { recursive: true, force: true })
      await rename(fresh, target)
      try {
        // Group-readable: with --split as separate users, the gateway serves what the upgrade installs.
        await writeFileAtomic(join(this.dir, CURRENT), `${JSON.stringify({ sha256 })}\n`, 0o640)
      } catch (err) {
        // Unless the switch happened before the failure, the old app stays current and the new one, never served, goes.
        if (this.current()?.sha256 !== sha256) await rm(target, { recursive: true, force: true })
        throw err
      }
    }
    for (const name of await readdir(this.dir)) {
      if (name !== CURRENT && name !== sha256) await rm(join(this.dir, name), { recursive: true, force: true })
    }
  }
}
