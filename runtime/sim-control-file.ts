import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsUserCredentials } from '../bus/index.js'

/** How `hemd sim` reaches a running simulated device: its bus and the `simctl` user's password for this boot. */
export interface SimControlAccess {
  devid: string
  url: string
  credentials?: NatsUserCredentials
}

const FILE = 'sim-control.json'

/** Written at every boot of a sim device, readable by its owner only, like the bus configuration beside it. */
export async function writeSimControl(runDir: string, access: SimControlAccess): Promise<void> {
  const tmp = join(runDir, `${FILE}.tmp`)
  await writeFile(tmp, JSON.stringify(access), { mode: 0o600 })
  await rename(tmp, join(runDir, FILE))
}

export async function readSimControl(runDir: string): Promise<SimControlAccess | undefined> {
  try {
    return JSON.parse(await readFile(join(runDir, FILE), 'utf8')) as SimControlAccess
  } catch {
    return undefined
  }
}
