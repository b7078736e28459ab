// What the backup routes refuse (docs/backup.md, contract.md): a backup without a passphrase, by the user, over plain
// HTTP; a restore onto a personalised device or with nothing staged; a wrong passphrase, an altered file and another
// format version, each journaled without the passphrase; and failed restores beyond three are paced.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { LogResult, LogType } from '../protocol/index.js'
import { BACKUP_PASS, downloadBackup, restoreWith, setBackupPassphrase, uploadBackup } from './helpers/backup.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { wipeout } from './helpers/model-device.js'
import { login, MASTER_PASS, owned } from './helpers/owner.js'

t.test('backup and restore refusals', async (t) => {
  const dir = t.testdir()
  const a = await owned(t, { dataDir: join(dir, 'a') })
  const master = await login(a.base, 'system:backup', MASTER_PASS)
  const restores = async (dataDir: string) =>
    (await readJournal(dataDir)).records.filter((r) => r.type === LogType.RESTORE)

  const none = await downloadBackup(a.https, master)
  t.same([none.status, none.json?.error], [409, 'no_backup_passphrase'], 'no passphrase set: 409')
  const user = await login(a.base, 'system:backup')
  t.equal((await downloadBackup(a.https, user)).status, 403, 'a U token with the scope: 403')
  t.equal((await setBackupPassphrase(a.https, user)).status, 403, 'nor may the user set the passphrase')
  t.equal((await downloadBackup(a.https, await login(a.base, 'system:config', MASTER_PASS))).status, 403, 'M, no scope')
  const weak = await setBackupPassphrase(a.https, master, 'too short')
  t.same([weak.status, weak.json?.error], [400, 'weak_passphrase'], 'a short passphrase: 400')
  t.equal((await setBackupPassphrase(a.base, master)).status, 418, 'plain HTTP: refused (418)')
  t.equal((await setBackupPassphrase(a.https, master)).status, 200, 'set')
  t.equal((await downloadBackup(a.base, master)).status, 418, 'a backup over plain HTTP: refused (418)')
  const file = (await downloadBackup(a.https, master)).bytes
  t.ok(file.length > 100, 'a backup')

  const onA = await uploadBackup(a.https, file)
  t.same([onA.status, onA.json?.error], [409, 'already_personalised'], 'no upload onto a personalised device')
  const restoreA = await restoreWith(a.https)
  t.same([restoreA.status, restoreA.json?.error], [409, 'already_personalised'], 'nor a restore')
  t.match(await restores(a.device.dataDir), [{ result: LogResult.FAILED, decoded: { status: 409 } }], 'journaled')

  const b = await bootDevice(t, { dataDir: join(dir, 'b'), variant: 'E' })
  const https = b.httpsUrl!
  const nothing = await restoreWith(https)
  t.same([nothing.status, nothing.json?.error], [409, 'nothing_staged'], 'nothing staged: 409')
  t.equal((await uploadBackup(b.httpUrl!, file)).status, 418, 'no upload over plain HTTP')
  const tooBig = await uploadBackup(https, new Uint8Array(9 * 1024 * 1024))
  t.equal(tooBig.status, 413, 'a file above the limit: 413')

  const other = Uint8Array.from(file)
  new DataView(other.buffer).setUint16(10, 2)
  t.equal((await uploadBackup(https, other)).status, 200, 'another version is staged')
  const unsupported = await restoreWith(https)
  t.same([unsupported.status, unsupported.json?.error], [406, 'unsupported_backup'], 'another version: 406')

  t.equal((await uploadBackup(https, file)).status, 200)
  const wrong = await restoreWith(https, 'not the backup passphrase')
  t.same([wrong.status, wrong.json?.error], [406, 'bad_backup'], 'a wrong passphrase: 406')
  const tampered = Uint8Array.from(file)
  tampered[tampered.length - 40]! ^= 0x04
  t.equal((await uploadBackup(https, tampered)).status, 200)
  const altered = await restoreWith(https)
  t.same([altered.status, altered.json], [406, wrong.json], 'an altered file: 406, the same answer')
  t.equal((await restoreWith(https, 'still not the passphrase')).status, 406, 'a third failure')
  const paced = await restoreWith(https)
  t.equal(paced.status, 429, 'the fourth try within 30 s is paced')
  t.ok(Number(paced.headers['retry-after']) > 0, 'with Retry-After')

  const journal = await readJournal(b.dataDir)
  t.match(
    journal.records
      .filter((r) => r.type === LogType.RESTORE)
      .map((r) => [r.result, r.decoded?.status, r.decoded?.code]),
    [
      [LogResult.FAILED, 409, 'nothing_staged'],
      [LogResult.FAILED, 406, 'unsupported_backup'],
      [LogResult.FAILED, 406, 'bad_backup'],
      [LogResult.FAILED, 406, 'bad_backup'],
      [LogResult.FAILED, 406, 'bad_backup'],
    ],
    'each refusal journaled',
  )
  const text = JSON.stringify(journal.records)
  for (const secret of [BACKUP_PASS, 'not the backup passphrase', 'still not the passphrase'])
    t.notOk(text.includes(secret), 'no passphrase in the journal')
  t.equal((await call(`${b.httpUrl}/api/system/status`)).json.inited, false, 'B stays fresh')

  const stored = join(a.device.dataDir, 'keys', 'backup-key.bin')
  t.ok(existsSync(stored), "A keeps its backup key (sealed) in the key store's storage")
  t.notOk(readFileSync(stored).includes(Buffer.from(BACKUP_PASS)), 'never the passphrase')
  await wipeout(a.base, a.device.dataDir, a.token)
  t.notOk(existsSync(stored), 'a wipeout erases the backup key with the keys')
})
