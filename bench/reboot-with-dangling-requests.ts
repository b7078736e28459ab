import { setTimeout as sleep } from 'node:timers/promises'
import type { HemdTarget } from './hemd-target.js'
import { partialRequest } from './partial-request.js'
import { TimingError } from './timing-error.js'

/** Longer than uWS's idle timeout (10 s): a dangling request that held up the reboot would show. */
const ANSWER_TIMEOUT_MS = 30_000
/** How long the device may take to come back before the bench gives up. */
const BACK_TIMEOUT_MS = 60_000

/**
 * The time from asking for a reboot to the device answering status 200 again, while two
 * requests wait for bodies that never come (a JSON POST announcing 40 bytes and sending 5, an
 * upload announcing 100000 and sending 300). The reboot answers them 503 and closes them itself
 * rather than waiting for uWS's idle timeout. "Again" is the new boot's: its status answers 200
 * and the old boot's token is refused.
 */
export async function measureRebootWithDanglingRequests(hemd: HemdTarget): Promise<number> {
  const { client } = hemd
  const json = partialRequest(
    hemd.url,
    {
      method: 'POST',
      path: '/api/system/checkin',
      headers: { 'Content-Type': 'application/json' },
      contentLength: 40,
    },
    Buffer.from('{"che'),
    ANSWER_TIMEOUT_MS,
  )
  const upload = partialRequest(
    hemd.url,
    {
      method: 'POST',
      path: '/api/system/upgrade/upload_fw',
      headers: {
        'Content-Type': 'application/octet-stream',
        'Content-Disposition': 'attachment; filename="firmware.bin"',
      },
      contentLength: 100_000,
    },
    Buffer.alloc(300),
    ANSWER_TIMEOUT_MS,
  )
  await Promise.all([json.written, upload.written])
  // Let the gateway take both heads before the reboot is asked for.
  await sleep(300)
  const oldToken = await client.token('system:config')
  const started = performance.now()
  await client.reboot()
  for (const [what, answer] of [
    ['the JSON POST', await json.answer],
    ['the upload', await upload.answer],
  ] as const) {
    if (answer.status !== 503)
      throw new TimingError(`${what} waiting for its body was answered ${answer.status}, not 503`)
  }
  const deadline = started + BACK_TIMEOUT_MS
  while (!(await backAfterReboot(hemd, oldToken))) {
    if (performance.now() > deadline)
      throw new TimingError(`the device was not back ${BACK_TIMEOUT_MS} ms after its reboot`)
    await sleep(10)
  }
  return performance.now() - started
}

/** Status 200 from the new boot, whose services refuse the token of the old one. */
async function backAfterReboot(hemd: HemdTarget, oldToken: string): Promise<boolean> {
  const { transport } = hemd.client
  try {
    if ((await transport.request('GET', '/api/system/status')).status !== 200) return false
    return (await transport.request('GET', '/api/system/config', { token: oldToken })).status === 401
  } catch {
    // Refused or reset while the gateway restarts.
    return false
  }
}
