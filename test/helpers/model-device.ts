// What the model tests of the identity machines share: the device's status, its boots as the
// journal counts them, and the wipeout that reboots it into a fresh device.
import { LogType } from '../../protocol/journal.js'
import { call } from './http.js'
import { readJournal } from './journal.js'
import { api } from './keys.js'
import { until } from './until.js'

export async function status(base: string): Promise<Record<string, any>> {
  const answer = await call(`${base}/api/system/status`)
  if (answer.status !== 200) throw new Error(`status: ${answer.status} ${answer.text}`)
  return answer.json
}

/** Boots so far: each journals one STARTUP. */
export async function boots(dataDir: string): Promise<number> {
  return (await readJournal(dataDir)).records.filter((r) => r.type === LogType.STARTUP).length
}

/** Until a boot after `before` has journaled its start and answers. */
export async function rebooted(base: string, dataDir: string, before: number): Promise<void> {
  await until(
    'rebooted',
    async () => (await boots(dataDir)) > before && (await call(`${base}/api/system/status`)).status === 200,
  )
}

/**
 * POST config {wipeout: true} with a system:config token; resolves once the reboot it orders has brought the device
 * back.
 */
export async function wipeout(base: string, dataDir: string, token: string): Promise<void> {
  const before = await boots(dataDir)
  const answer = await api(`${base}/api/system/config`, token, { wipeout: true })
  if (answer.status !== 200) throw new Error(`wipeout: ${answer.status} ${answer.text}`)
  await rebooted(base, dataDir, before)
}
