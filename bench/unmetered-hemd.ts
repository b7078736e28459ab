import { join } from 'node:path'
import { copyDataDir } from './boot-journal.js'
import { startHemdTarget, type HemdTarget } from './hemd-target.js'

/**
 * The metrics group's baseline: hemd on a copy of the cached data dir, its processes without instruments
 * (metrics/process-metrics.ts reads HEMD_UNMETERED), so that what they cost is measured in the same run.
 */
export async function startUnmeteredHemd(cachedDataDir: string, workDir: string): Promise<HemdTarget> {
  const dataDir = join(workDir, 'hemd-unmetered')
  await copyDataDir(cachedDataDir, dataDir)
  return startHemdTarget(dataDir, true, [], { ...process.env, HEMD_UNMETERED: '1' })
}
