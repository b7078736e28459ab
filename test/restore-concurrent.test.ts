// Two restores of one staged file at once: one restores, the other is refused, and the device keeps the keys of the
// one that did (the second must never erase what the first wrote and journaled).
import t from 'tap'
import { LogType } from '../protocol/index.js'
import { madeBackup, restoreWith, uploadBackup } from './helpers/backup.js'
import { bootDevice } from './helpers/device.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { bearer, login } from './helpers/owner.js'

t.test('two restores at once: one 200, one refused, the keys stay', async (t) => {
  const device = await bootDevice(t, { variant: 'E', dataDir: t.testdir() })
  const https = device.httpsUrl!
  t.equal((await uploadBackup(https, await madeBackup('E'))).status, 200, 'staged')
  const answers = await Promise.all([restoreWith(https), restoreWith(https)])
  const statuses = answers.map((answer) => answer.status).sort()
  t.equal(statuses[0], 200, 'one restores')
  t.equal(statuses[1], 409, `the other is refused (${answers.map((answer) => answer.json?.error).join(', ')})`)
  const token = await login(device.httpUrl!, 'keymgmt:list')
  const list = await call(`${https}/api/keymgmt/list`, { headers: bearer(token) })
  t.match(
    list,
    { status: 200, json: { total: 1, list: [{ kid: /^[0-9a-f]{32}$/ }] } },
    'the restored key is in the store',
  )
  const restores = (await readJournal(device.dataDir)).records.filter((r) => r.type === LogType.RESTORE)
  t.equal(restores.filter((r) => r.result === 0).length, 1, 'one RESTORE journaled')
})
