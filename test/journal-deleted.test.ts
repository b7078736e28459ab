// The anchor and every journal file deleted together (issue 35 item 3, open point 2): the device
// would boot as a new one while its enclave still holds the owner's keys. That boot is a tamper
// (0x08, NON_SECURE_STATE source journal) and the device takes no new owner, then or later; a
// genuinely new device, one whose first boot crashed before its first record, and one after a
// wipeout (even one a crash cut before the enclave was erased) still take one.
import { copyFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { FLS } from '../protocol/index.js'
import { LogType } from '../protocol/journal.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { wipeout } from './helpers/model-device.js'
import { login, owned } from './helpers/owner.js'

const enclaveFile = (dataDir: string, name: string): string => join(dataDir, 'enclave', name)

/** Deletes the anchor and every journal file: what is left looks like a device that never wrote one. */
async function deleteJournal(dataDir: string): Promise<void> {
  const dir = join(dataDir, 'journal')
  for (const name of await readdir(dir)) await rm(join(dir, name))
  await rm(enclaveFile(dataDir, 'journal-anchor.json'), { force: true })
}

/** Boots: fls_state, and whether `GET /api/auth/init` hands out a challenge (status and code). */
async function bootAndAsk(t: Test, dataDir: string) {
  const device = await bootDevice(t, { dataDir, variant: 'E' })
  const base = device.httpUrl!
  const fls = (await call(`${base}/api/system/status`)).json.fls_state as number
  const init = await call(`${base}/api/auth/init`)
  return { device, base, fls, init: { status: init.status, error: init.json?.error as unknown } }
}

async function journalTampers(dataDir: string) {
  const { records } = await readJournal(dataDir)
  return records.filter((r) => r.type === LogType.NON_SECURE_STATE && r.decoded?.source === 'journal')
}

t.test("a personalised device's journal and anchor deleted: a tamper, and no new owner", async (t) => {
  const o = await owned(t)
  const dataDir = o.device.dataDir
  await o.device.stop()
  await deleteJournal(dataDir)

  const first = await bootAndAsk(t, dataDir)
  t.equal(first.fls & FLS.INTEGRITY, FLS.INTEGRITY, 'fls_state has 0x08')
  t.same(first.init, { status: 409, error: 'device_fault' }, 'personalisation refused')
  await first.device.stop()
  t.match(await journalTampers(dataDir), [{ result: 2, decoded: { raised: FLS.INTEGRITY, source: 'journal' } }])

  const next = await bootAndAsk(t, dataDir)
  t.equal(next.fls & FLS.INTEGRITY, FLS.INTEGRITY, 'the next boot still says the history is lost')
  t.same(next.init, { status: 409, error: 'device_fault' }, 'and still takes no new owner')
  t.ok(await login(next.base, 'system:config'), 'the owner, whose keys the enclave kept, can log in (to wipe out)')
  await next.device.stop()
})

t.test('a new device, and one whose first boot crashed before its first record, take an owner', async (t) => {
  const root = t.testdir({ fresh: {}, crashed: {} })
  const fresh = await bootAndAsk(t, join(root, 'fresh'))
  t.same({ fls: fresh.fls, init: fresh.init.status }, { fls: 0, init: 200 }, 'a new device')
  await fresh.device.stop()

  const crashed = join(root, 'crashed')
  await (await bootDevice(t, { dataDir: crashed, variant: 'E' })).stop()
  const [id] = await readdir(join(crashed, 'journal'))
  await deleteJournal(crashed)
  // Torn at its creation: the banner written, KEY_INIT not.
  await writeFile(join(crashed, 'journal', id!), '# hemd journal torn at its creation\n{"seq":0')
  const after = await bootAndAsk(t, crashed)
  t.same({ fls: after.fls, init: after.init.status }, { fls: 0, init: 200 }, 'its first records never made')
  await after.device.stop()
  t.same(await journalTampers(crashed), [])
})

t.test('after a wipeout, and after one cut before the enclave was erased, the device takes an owner', async (t) => {
  const o = await owned(t)
  const dataDir = o.device.dataDir
  const credentials = enclaveFile(dataDir, 'credentials.json')
  const kept = join(dataDir, 'kept-credentials.json')
  await copyFile(credentials, kept)
  await wipeout(o.base, dataDir, o.token)
  const wiped = await call(`${o.base}/api/auth/init`)
  t.equal(wiped.status, 200, 'wiped out: a new owner is welcome')
  await o.device.stop()

  // A crash after the wipeout was journaled, before the enclave erased the keys.
  await copyFile(kept, credentials)
  const cut = await bootAndAsk(t, dataDir)
  t.same({ fls: cut.fls, init: cut.init.status }, { fls: 0, init: 200 }, 'the journal says wiped: no tamper')
  await cut.device.stop()
  t.same(await journalTampers(dataDir), [])
})
