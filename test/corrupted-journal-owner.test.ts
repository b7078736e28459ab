// A journal that no longer verifies, on a personalised device: the owner stays.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import { LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api, createKey, Tokens } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

// A journal that no longer verifies lost the records of the personalisation it held, and the
// identity fold then made the device look new: a stranger could personalise it, the key store
// wiped the owner's keys and the storage service erased the disks. A broken history now adds an
// owner (the enclave's keys still say there is one), never removes one.
t.test('a corrupted journal keeps the owner, the keys and the disks; it takes no new owner', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const tokens = new Tokens(o.base)
  await createKey(o.https, await tokens.get('keymgmt:gen'), { label: 'kept', type: 'AES256' })
  const corrupted = await sendSimCommand(o.device.dataDir, { action: 'corrupt-journal' })
  t.equal(corrupted.status, 200, 'the only journal file, which holds the personalisation, is corrupted')
  const recordsBefore = (await readJournal(o.device.dataDir)).records.length

  await o.device.restart()
  const status = async (token?: string) =>
    (await api(`${o.base}/api/system/status`, token).catch(() => undefined))?.json ?? {}
  await until('fls_state 0x08 after the reboot', async () => (await status()).fls_state === 0x08, { rethrow: true })
  t.not((await status()).inited, false, "still personalised: the enclave holds the owner's keys")

  t.match(
    await call(`${o.base}/api/auth/init`),
    { status: 409, json: { error: 'device_fault' } },
    'no challenge for a new owner',
  )
  t.match(
    await api(`${o.base}/api/auth/init`, undefined, { init: 'x.y.z' }),
    { status: 409, json: { error: 'device_fault' } },
    'no personalisation',
  )

  const config = await login(o.base, 'system:config')
  t.match((await status(config)).repo_stats, { total: 1 }, 'the owner logs in, and the key is still there')
  t.ok((await login(o.base, 'logger:get')).length > 0, "an auditor's token for the logs")
  const afterReboot = (await readJournal(o.device.dataDir)).records.slice(recordsBefore)
  t.notOk(
    afterReboot.some(
      (r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'disk' && r.decoded?.to === 'unformatted',
    ),
    'no disk was erased',
  )

  t.equal(
    (await api(`${o.base}/api/system/config`, config, { wipeout: true })).status,
    200,
    'the owner can still wipe it out',
  )
  const init = () => call(`${o.base}/api/auth/init`).catch(() => undefined)
  await until(
    'rebooted after the wipeout',
    async () => ![undefined, 'reboot_pending'].includes((await init())?.json?.error),
    { rethrow: true },
  )
  t.equal((await status()).inited, false, 'no owner any more')
  const slots = await readFile(join(o.device.dataDir, 'keys', 'slots-4096.bin'))
  t.ok(
    slots.every((b) => b === 0),
    'the wipeout erased the keys',
  )
  t.match(
    await init(),
    { status: 409, json: { error: 'device_fault' } },
    'and still no new owner: the history stays broken',
  )
})
