import autocannon from 'autocannon'
import { createHash } from 'node:crypto'
import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { encryptRequestBody } from './encrypt-request.js'
import { startHemdTarget } from './hemd-target.js'

/** Where built data dirs are kept between runs (var/ is the repository's ignored scratch). */
export const BENCH_CACHE_DIR = fileURLToPath(new URL('../../var/bench-cache/', import.meta.url))
const FIRMWARE_MANIFEST = fileURLToPath(new URL('../firmware.json', import.meta.url))
const ENCRYPT = '/api/crypto/cipher/encrypt'
/** The data-dir lock's file (hal/sim/data-dir-lock.ts). */
const DATA_DIR_LOCK = 'hemd.lock'
const execFileAsync = promisify(execFile)

export class BootJournalError extends Error {
  override readonly name = 'BootJournalError'
}

/**
 * A stopped device's data dir whose journal holds at least `records` records, made by the device
 * itself (personalised, then one journaled encrypt per record over HTTPS), so that a boot verifies
 * and replays it like any other history. Kept under the bench cache, keyed by the build (the
 * firmware manifest's digest) and the count, so that later runs of the same build reuse it.
 */
export async function bootDataDir(records: number, progress: (line: string) => void): Promise<string> {
  const manifest = await readFile(FIRMWARE_MANIFEST)
  const build = createHash('sha256').update(manifest).digest('hex').slice(0, 16)
  const dir = join(BENCH_CACHE_DIR, `boot-${build}-${records}`)
  if (await exists(dir)) return dir
  await mkdir(BENCH_CACHE_DIR, { recursive: true })
  // Data dirs of other builds (built or half-built) are never used again.
  for (const name of await readdir(BENCH_CACHE_DIR)) {
    if (name.startsWith('boot-') && !name.startsWith(`boot-${build}-`))
      await rm(join(BENCH_CACHE_DIR, name), { recursive: true, force: true })
  }
  const building = `${dir}.building-${process.pid}`
  await rm(building, { recursive: true, force: true })
  progress(`building a data dir with ${records} journal records (cached in ${dir})`)
  const hemd = await startHemdTarget(building)
  try {
    await load(hemd.httpsUrl + ENCRYPT, hemd.token, hemd.kid, records)
  } finally {
    await hemd.stop()
  }
  const count = await journalRecords(join(building, 'journal'))
  if (count < records) throw new BootJournalError(`the built journal holds ${count} records, not ${records}`)
  // Renamed only when complete: a run cut short leaves no half-built cache entry behind.
  await rename(building, dir).catch(async (error: unknown) => {
    // Another run of the same build got there first: its copy is as good.
    if (!(await exists(dir))) throw error
    await rm(building, { recursive: true, force: true })
  })
  return dir
}

/**
 * A fresh copy of a cached data dir, unlocked: each boot appends to its journal, the cache must stay as
 * built. coreutils' cp keeps the disk images sparse (P's Disk 1 is gigabytes of holes), which
 * node's fs.cp does not.
 */
export async function copyDataDir(from: string, to: string): Promise<void> {
  await execFileAsync('cp', ['-a', '--sparse=always', from, to])
  // No process holds the copy yet: a lock its source kept (a builder stopped short) names a pid that may
  // since run something else, and hemd would refuse the copy as in use.
  await rm(join(to, DATA_DIR_LOCK), { force: true })
}

/** `amount` encrypt requests, each one journal record, every one answered 2xx. */
function load(url: string, token: string, kid: string, amount: number): Promise<void> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: encryptRequestBody(kid),
        connections: 32,
        amount,
        servername: 'localhost',
      },
      (error, result) => {
        if (error) return reject(error)
        if (result['2xx'] !== amount)
          return reject(new BootJournalError(`${result['2xx']} of ${amount} encrypts answered 2xx`))
        resolve()
      },
    )
  })
}

/** Record lines (every line but the `#` comments) of the journal's files. */
async function journalRecords(journalDir: string): Promise<number> {
  let count = 0
  for (const name of await readdir(journalDir)) {
    const bytes = await readFile(join(journalDir, name))
    let start = 0
    while (start < bytes.length) {
      const newline = bytes.indexOf(0x0a, start)
      if (newline < 0) break
      if (bytes[start] !== 0x23) count++
      start = newline + 1
    }
  }
  return count
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}
