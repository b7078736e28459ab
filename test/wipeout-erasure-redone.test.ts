// A wipeout whose erasure of the enclave failed, so that the owner's login keys and TLS certificate
// stayed in it: the failure is journaled (WIPEOUT_ERASE, ERROR), and the next boot erases the enclave
// and the disks again before any service starts (WIPEOUT_ERASE, OK, source `boot`), so the former
// owner's certificate is never served and nothing of theirs is left. With --split, where auth erases
// in a process of its own, the gateway is given what the enclave holds once auth has started.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { SimEnclave } from '../hal/sim/sim-enclave.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { b64 } from './helpers/base64.js'
import { deviceTlsKey, servedCertificate } from './helpers/device-tls.js'
import { expectFresh } from './helpers/fresh-device.js'
import { readJournal, verifyDataDir } from './helpers/journal.js'
import { api, createKey } from './helpers/keys.js'
import { boots, rebooted } from './helpers/model-device.js'
import { login, owned, type Owned } from './helpers/owner.js'
import { issue, makeCa } from './helpers/x509-fixtures.js'

const ca = await makeCa('Wipeout Test Root')

/** The owner imports a certificate for the device's own key; served from the reboot on. Returns its DER. */
async function ownersCertificate(t: Test, o: Owned): Promise<Buffer> {
  const leaf = Buffer.from(await issue(ca, await deviceTlsKey(o.base, o.token), 'owner.example'))
  const imported = await api(`${o.base}/api/system/config`, o.token, {
    tls: { crt: b64(Buffer.concat([leaf, ca.cert])) },
  })
  t.equal(imported.status, 200, "the owner's certificate")
  const before = await boots(o.device.dataDir)
  t.equal((await api(`${o.base}/api/system/reboot`, o.token)).status, 200)
  await rebooted(o.base, o.device.dataDir, before)
  t.same(await servedCertificate(o.https), leaf, 'served from the reboot on')
  return leaf
}

t.test("a failed enclave wipe is redone by the next boot, before the owner's certificate is served", async (t) => {
  const o = await owned(t, { variant: 'P' })
  const { dataDir } = o.device
  const leaf = await ownersCertificate(t, o)
  await createKey(o.https, await login(o.base, 'keymgmt:gen'), { label: 'owned', type: 'AES256' })

  // The enclave's erasure fails once, as a write the enclave refuses would.
  const wipe = SimEnclave.prototype.wipe
  t.teardown(() => void (SimEnclave.prototype.wipe = wipe))
  SimEnclave.prototype.wipe = async () => {
    SimEnclave.prototype.wipe = wipe
    throw new Error('EIO: the enclave refused the write')
  }
  const before = await boots(dataDir)
  const wiped = await api(`${o.base}/api/system/config`, await login(o.base, 'system:config'), { wipeout: true })
  t.equal(wiped.status, 500, 'the failed erasure is the answer')
  await rebooted(o.base, dataDir, before)

  t.notSame(await servedCertificate(o.https), leaf, "the next boot serves the device's own certificate")
  t.notOk(existsSync(join(dataDir, 'enclave', 'credentials.json')), "the owner's login keys are gone")
  await expectFresh(t, o.base, dataDir, 'P')
  const { records } = await readJournal(dataDir)
  const erasures = records.filter((r) => r.type === LogType.WIPEOUT_ERASE)
  t.match(
    erasures,
    [
      { result: LogResult.ERROR, decoded: { source: 500, rid: String, failed: ['enclave'], reason: /EIO/ } },
      { result: LogResult.OK, decoded: { source: 'boot' } },
    ],
    'the failure and the boot that finished the erasure are journaled',
  )
  t.not(erasures[1]?.file, erasures[0]?.file, 'by the next boot')
  t.ok((await verifyDataDir(dataDir, o.device.logPublicKey, true)).ok, 'the journal verifies')
})

t.test("--split: a wipeout's reboot serves the device's own certificate, not the former owner's", async (t) => {
  const o = await owned(t, { variant: 'E', boot: { split: true } })
  const { dataDir } = o.device
  const leaf = await ownersCertificate(t, o)
  const before = await boots(dataDir)
  const wiped = await api(`${o.base}/api/system/config`, await login(o.base, 'system:config'), { wipeout: true })
  t.equal(wiped.status, 200, 'wiped out')
  await rebooted(o.base, dataDir, before)
  t.notSame(await servedCertificate(o.https), leaf, "the device's own certificate")
})
