import { setTimeout as sleep } from 'node:timers/promises'
import type { Device } from '../../runtime/index.js'

/** How long the banner waits for the mirror's first state (the backend's first answer, or its absence). */
const FIRST_STATE_MS = 2_000

/** The banner's lines on the fleet backend and the journal mirror; none without a backend. */
export async function mirrorBanner(device: Device): Promise<string[]> {
  const backend = device.backend
  if (!backend) return []
  for (let waited = 0; !device.mirror && waited < FIRST_STATE_MS; waited += 50) await sleep(50)
  const mirror = device.mirror
  const state = !mirror
    ? 'starting'
    : mirror.state === 'rollback'
      ? `ROLLBACK: the journal went back behind ${mirror.stream} (fls_state 0x08); nothing is mirrored`
      : mirror.state === 'mismatch'
        ? `MISMATCH: ${mirror.stream} does not continue the journal; nothing is mirrored ` +
          '(docs/operations.md, "Fleet backend": start the next --stream-generation)'
        : mirror.state === 'off'
          ? `off: the owner has not set trusted_backend (${mirror.stream})`
          : mirror.state === 'unreachable'
            ? `${mirror.stream}: the backend cannot be reached now; retrying`
            : `mirroring to ${mirror.stream}`
  return [
    `  backend ${withoutCredentials(backend.url)} (leaf node; JetStream domain ${backend.domain})`,
    `  mirror ${state}; GET /api/system/status shows it as it changes`,
  ]
}

/** The URL as it can be shown: the leaf user's password stays out of the banner (and any log that keeps it). */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.username = ''
    parsed.password = ''
    return parsed.toString().replace(/\/$/, '')
  } catch {
    return '(a URL that does not parse)'
  }
}
