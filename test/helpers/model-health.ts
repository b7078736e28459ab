// What the model tests of the health machine observe on a device, whatever drives its faults
// (model-health.test.ts through `hemd sim` and broken engines, model-health-diag.test.ts through
// the DIAG routes): fls_state in status, the fault's audit record, and the gate on a key.
import type { Test } from 'tap'
import { LogType } from '../../protocol/journal.js'
import { call, type Answer } from './http.js'
import { readJournal } from './journal.js'
import { api, b64 } from './keys.js'
import { until } from './until.js'

export interface ObservedDevice {
  base: string
  https: string
  dataDir: string
  /** An AES256 key of the device. */
  kid: string
  /** keymgmt:use for the key: a token dies with the auth service, so every boot logs in again. */
  use: string
}

export function encrypt(d: ObservedDevice): Promise<Answer> {
  return api(`${d.https}/api/crypto/cipher/encrypt`, d.use, {
    alg: 'AES256-GCM',
    kid: d.kid,
    msg: b64(Buffer.from('model')),
  })
}

/** Status is a projection of the health actor's published state: it follows the journal within moments. */
export async function showsFls(t: Test, d: ObservedDevice, fls: number): Promise<void> {
  let shown: unknown
  await until(
    `fls_state ${fls}`,
    async () => (shown = (await call(`${d.base}/api/system/status`)).json.fls_state) === fls,
    5000,
  ).catch(() => undefined)
  t.equal(shown, fls, `status.fls_state 0x${fls.toString(16)}`)
}

/** No bit raised, and the key encrypts. */
export async function inSecureState(t: Test, d: ObservedDevice): Promise<void> {
  await showsFls(t, d, 0)
  t.equal((await encrypt(d)).status, 200, 'the key encrypts')
}

/** The model's bits in status and in the fault's audit record, and keys refused. */
export async function inFailState(t: Test, d: ObservedDevice, fls: number): Promise<void> {
  await showsFls(t, d, fls)
  const { records } = await readJournal(d.dataDir)
  const audit = records.filter((r) => r.type === LogType.NON_SECURE_STATE || r.type === LogType.TRNG_FAILED).at(-1)
  t.equal(audit?.decoded?.fls, fls, 'the last fail-state record has the same bits')
  t.match(await encrypt(d), { status: 409, json: { error: 'device_fault' } }, 'the key refuses to encrypt')
}
