// Login keys stored for a personalisation or a restore whose journal append never happened (the process died between
// the two: docs/backup.md, "Flows"): the next boot finds a fresh device that verifies, with keys no owner has, and
// erases them before it serves; the device takes an owner as any fresh one.
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'

t.test('login keys without a journaled owner are erased at boot', async (t) => {
  const dataDir = t.testdir()
  await (await bootDevice(t, { dataDir, variant: 'E' })).stop()
  const file = join(dataDir, 'enclave', 'credentials.json')
  const key = () => randomBytes(32).toString('base64')
  await writeFile(file, `${JSON.stringify({ user: key(), master: key(), salt: key() })}\n`, { mode: 0o600 })
  const device = await bootDevice(t, { dataDir, variant: 'E' })
  t.notOk(existsSync(file), 'the keys are gone')
  const status = (await call(`${device.httpUrl}/api/system/status`)).json
  t.same([status.inited, status.fls_state], [false, 0], 'a fresh device, not a tampered one')
  t.equal((await call(`${device.httpUrl}/api/auth/init`)).status, 200, 'it takes an owner')
})
