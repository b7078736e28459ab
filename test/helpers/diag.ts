// The DIAG routes over real HTTP, and what their tests wait for: the fail state as status shows it,
// a reboot over the API.
import { performance } from 'node:perf_hooks'
import { call, type Answer } from './http.js'
import { api } from './keys.js'
import { boots, rebooted } from './model-device.js'
import { bearer } from './owner.js'
import { until } from './until.js'

/** `GET /api/diag/<path>`, no token. */
export function diag(base: string, path: string): Promise<Answer> {
  return call(`${base}/api/diag/${path}`)
}

/** A DIAG route that must answer 200 (throws otherwise). */
export async function diagOk(base: string, path: string): Promise<Answer> {
  const answer = await diag(base, path)
  if (answer.status !== 200) throw new Error(`diag ${path}: ${answer.status} ${answer.text}`)
  return answer
}

/** Until status shows `fls_state` `fls`; resolves with the ms that took. */
export async function flsShown(base: string, fls: number, ms = 10_000): Promise<number> {
  const start = performance.now()
  await until(
    `fls_state 0x${fls.toString(16)}`,
    async () => (await call(`${base}/api/system/status`)).json.fls_state === fls,
    ms,
  )
  return performance.now() - start
}

/** `GET /api/system/selftest`, with a token unless the device is fresh. */
export function selfTest(base: string, token?: string): Promise<Answer> {
  return call(`${base}/api/system/selftest`, token ? { headers: bearer(token) } : {})
}

/** Reboots over the API and resolves once the new boot answers. */
export async function rebootOver(base: string, dataDir: string, token: string): Promise<void> {
  const before = await boots(dataDir)
  const answer = await api(`${base}/api/system/reboot`, token)
  if (answer.status !== 200) throw new Error(`reboot: ${answer.status} ${answer.text}`)
  await rebooted(base, dataDir, before)
}
