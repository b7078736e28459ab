import { join } from 'node:path'
import { copyDataDir } from './boot-journal.js'
import { startHemdTarget, type HemdTarget } from './hemd-target.js'
import { startMonitoredBus } from './monitored-bus.js'

/** The scaling group's hemd, on a nats-server the bench started and watches. */
export interface BusHemd extends HemdTarget {
  /** The messages hemd's gateway has published on the bus so far. */
  gatewayPublished(): Promise<number>
}

/**
 * Starts hemd with `--bus` on a fresh copy of the cached data dir (the other hemds' device, the
 * same journal) and a nats-server configured by `hemd bus-config` with its monitor on (monitored-bus.ts).
 * Its stop stops hemd first, which journals its shutdown over the bus, then nats-server.
 */
export async function startBusHemd(cachedDataDir: string, workDir: string): Promise<BusHemd> {
  const dataDir = join(workDir, 'hemd-bus')
  await copyDataDir(cachedDataDir, dataDir)
  const bus = await startMonitoredBus(dataDir, join(workDir, 'bus'))
  try {
    const hemd = await startHemdTarget(dataDir, true, ['--bus', bus.dir])
    return {
      ...hemd,
      gatewayPublished: bus.gatewayPublished,
      stop: async () => {
        await hemd.stop()
        await bus.stop()
      },
    }
  } catch (error) {
    await bus.stop()
    throw error
  }
}
