import { setTimeout as sleep } from 'node:timers/promises'
import type { Device } from '../../runtime/index.js'

/** How long the banner waits for the identity's first state (the auth service publishes it as it starts). */
const FIRST_STATE_MS = 2_000

/** The banner's warning for a CORS origin `*`, which only the owner sets; none for any other. */
export async function originBanner(device: Pick<Device, 'corsOrigin'>): Promise<string[]> {
  for (let waited = 0; device.corsOrigin === undefined && waited < FIRST_STATE_MS; waited += 50) await sleep(50)
  if (device.corsOrigin !== '*') return []
  return [
    '  WARNING: CORS origin *: every web page the owner visits may call the routes that need no token',
    '           (docs/security.md, "CORS"); set the origin of the pages that need the API instead',
  ]
}
