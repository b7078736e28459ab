import { readFileSync } from 'node:fs'
import { errorCode } from './error-code.js'

/**
 * True while `pid` runs. A zombie counts as gone: an init that is slow to reap (as in some
 * containers) would otherwise keep a dead hemd's lock alive.
 */
export function isProcessAlive(pid: number): boolean {
  // 0 and negative pids would address process groups, and '' parses as 0.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    return errorCode(err) === 'EPERM'
  }
  return !isZombie(pid)
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The state follows the command name, which is in parentheses and may itself contain them.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
  } catch {
    return false
  }
}
