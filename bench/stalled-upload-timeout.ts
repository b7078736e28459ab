import type { HemdTarget } from './hemd-target.js'
import { partialRequest } from './partial-request.js'
import { TimingError } from './timing-error.js'

/** `http_option_dosprot_mode` 1: a request's body has 1 × 500 ms to arrive. */
const DOSPROT_MODE = 1
/** Far past the deadline: an upload that is never cut shows as a failure, not a hang. */
const ANSWER_TIMEOUT_MS = 30_000

/**
 * The time from the last byte of a stalled upload (an authorised management-app upload over
 * HTTPS announcing 100000 bytes and sending 300) to its 408, with `http_option_dosprot_mode` 1.
 * The device is set back to no deadline afterwards.
 */
export async function measureStalledUploadTimeout(hemd: HemdTarget): Promise<number> {
  const { client } = hemd
  const token = await client.token('system:upgrade')
  await client.setConfig({ http_option_dosprot_mode: DOSPROT_MODE })
  try {
    const upload = partialRequest(
      hemd.httpsUrl,
      {
        method: 'POST',
        path: '/api/system/upgrade/upload_ui',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': 'attachment; filename="webroot.tar"',
        },
        contentLength: 100_000,
      },
      Buffer.alloc(300),
      ANSWER_TIMEOUT_MS,
    )
    await upload.written
    const answer = await upload.answer
    if (answer.status !== 408) throw new TimingError(`the stalled upload was answered ${answer.status}, not 408`)
    return answer.answeredAt - answer.lastByteAt
  } finally {
    await client.setConfig({ http_option_dosprot_mode: 0 })
  }
}
