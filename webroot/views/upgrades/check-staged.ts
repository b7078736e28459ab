// check_fw / check_ui run in the background on the device: the first call starts the check (201),
// later ones say it runs (202) until it verified the image (200) or rejected it (406, and why).
import { DeviceUnreachableError } from '../../../client/browser.js'
import { answerRefusal, type DeviceSession } from '../../device-session.js'
import type { ImageKind } from './image-file.js'

const POLL_MS = 250

/** The check's status now (200, 201 or 202); a refusal (406 rejected, 404 nothing uploaded) as the client's error. */
async function checkOnce(kind: ImageKind, token: string): Promise<number> {
  const path = `/api/system/upgrade/check_${kind}`
  let answer: Response
  let text: string
  try {
    answer = await fetch(path, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' })
    text = await answer.text()
  } catch (cause) {
    throw new DeviceUnreachableError(path, { cause })
  }
  if (!answer.ok) throw answerRefusal(answer.status, text, `GET ${path}`)
  return answer.status
}

/** Starts the check of the staged image and waits for its verdict: resolves once it verified. */
export async function checkStaged(
  kind: ImageKind,
  session: DeviceSession,
  onRunning: (seconds: number) => void,
): Promise<void> {
  const started = Date.now()
  while ((await session.authorized('system:upgrade', (token) => checkOnce(kind, token))) !== 200) {
    onRunning(Math.round((Date.now() - started) / 1000))
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
