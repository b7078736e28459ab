import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { copyDataDir } from './boot-journal.js'
import { spawnHemd } from './hemd-target.js'

/** Boots of one data dir: each from a fresh copy, timed from spawning hemd to its banner. */
export interface BootSample {
  /** Each boot's time to ready, in ms, in the order run. */
  readyMs: number[]
  medianMs: number
  maxMs: number
}

/**
 * Starts hemd `boots` times on copies of `dataDir` (a device with a long journal, see
 * bootDataDir), or with `dataDir` undefined on no data dir at all (a fresh device: its keys,
 * certificates and first journal file made at this boot), each time from spawning it to its banner
 * (every service up, the journal verified and replayed), and stops it again.
 */
export async function measureBoots(
  dataDir: string | undefined,
  workDir: string,
  boots: number,
  signal: AbortSignal,
): Promise<BootSample> {
  const readyMs: number[] = []
  for (let i = 0; i < boots; i++) {
    signal.throwIfAborted()
    const copy = join(workDir, `boot-${i}`)
    if (dataDir !== undefined) await copyDataDir(dataDir, copy)
    const hemd = await spawnHemd(copy)
    readyMs.push(hemd.readyMs)
    await hemd.stop()
    await rm(copy, { recursive: true, force: true })
  }
  const sorted = [...readyMs].sort((x, y) => x - y)
  return { readyMs, medianMs: sorted[sorted.length >> 1]!, maxMs: sorted[sorted.length - 1]! }
}
