import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * A process a killed hemd left behind (its nats-server, its runtime), named by a pid file: it
 * is killed only if its command line still carries every marker, so a reused pid is safe.
 */
export async function killOrphan(pidFile: string, markers: string[]): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim())
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
  if (cmdline === '' || !markers.every((marker) => cmdline.includes(marker))) return
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    return
  }
  const deadline = Date.now() + 5000
  while (Date.now() < deadline && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')) !== '')
    await sleep(20)
}
