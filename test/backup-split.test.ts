// A backup and a restore with `--split`: the key store, a process of its own (the only one holding key material), seals
// and opens the file and keeps the backup key; the auth service forwards the owner's configuration and login keys to it
// over the bus, which lets only the auth service send those steps.
import { join } from 'node:path'
import t from 'tap'
import { downloadBackup, restoreWith, setBackupPassphrase, uploadBackup } from './helpers/backup.js'
import { bootDevice } from './helpers/device.js'
import { api, createKey } from './helpers/keys.js'
import { login, MASTER_PASS, owned } from './helpers/owner.js'

t.test('with --split: the key store, a process of its own, seals and opens; auth forwards over the bus', async (t) => {
  const dir = t.testdir()
  const a = await owned(t, { dataDir: join(dir, 'a'), boot: { split: true } })
  const kid = await createKey(a.https, await login(a.base, 'keymgmt:gen'), { label: 'split', type: 'ED25519' })
  const master = await login(a.base, 'system:backup', MASTER_PASS)
  t.equal((await setBackupPassphrase(a.https, master)).status, 200, 'passphrase set')
  const file = await downloadBackup(a.https, master)
  t.equal(file.status, 200, 'a backup')
  const b = await bootDevice(t, { dataDir: join(dir, 'b'), variant: 'E', split: true })
  t.equal((await uploadBackup(b.httpsUrl!, file.bytes)).status, 200, 'staged')
  const restored = await restoreWith(b.httpsUrl!)
  t.same([restored.status, restored.json?.keys], [200, 1], `restored: ${restored.text.slice(0, 200)}`)
  const got = await api(`${b.httpsUrl}/api/keymgmt/get/${kid}`, await login(b.httpUrl!, 'keymgmt:get'))
  t.equal(got.status, 200, 'the key serves on B, for the same owner')
})
