// After a reboot, an install or a wipeout: the device goes away and comes back. This watches
// it do so, in the status line, so that the owner knows when to go on.
import { deviceRequest } from './device-session.js'
import type { Feedback } from './feedback.js'
import type { DeviceStatus } from './view.js'

const POLL_MS = 500
/** A boot with a large journal, a firmware trial boot: minutes, not hours. */
const GIVE_UP_MS = 5 * 60_000

export class RestartTimeoutError extends Error {
  override readonly name = 'RestartTimeoutError'
}

/**
 * Resolves with the new boot's status once a new boot answers, not the old one still winding
 * down; `uptimeBefore` is the uptime read before the restart was asked for.
 */
export async function followRestart(feedback: Feedback, uptimeBefore: number): Promise<DeviceStatus> {
  const started = Date.now()
  let seenDown = false
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    const seconds = Math.round((Date.now() - started) / 1000)
    let status: DeviceStatus | undefined
    try {
      status = (await deviceRequest('/api/system/status')) as DeviceStatus
    } catch {
      seenDown = true
    }
    // A new boot's uptime is below the old one's, or (once it was seen down) no older than this wait.
    if (status && (status.uptime < uptimeBefore || (seenDown && status.uptime <= seconds + 1))) return status
    if (Date.now() - started > GIVE_UP_MS)
      throw new RestartTimeoutError(`The device has not come back after ${seconds} s. Check its power and network.`)
    feedback.progress(
      seenDown ? `The device is restarting… (${seconds} s)` : `Waiting for the device to restart… (${seconds} s)`,
    )
  }
}
