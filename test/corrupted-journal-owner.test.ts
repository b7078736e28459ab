// Issue 8 regressions, found while replaying and model-testing devices.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout } from 'node:timers/promises'
import t from 'tap'
import { AuthActor } from '../actors/auth/auth-actor.js'
import { ServiceHost } from '../bus/service-host.js'
import { sendSimCommand } from '../cli/hemd/sim-cli.js'
import { LogType } from '../protocol/journal.js'
import { call } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { api, createKey, Tokens } from './helpers/keys.js'
import { silentLogger } from './helpers/logger.js'
import { wipeout } from './helpers/model-device.js'
import { login, owned } from './helpers/owner.js'
import { identity, scriptedIdentity } from './helpers/scripted-identity.js'
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
  const slots = await readFile(join(o.device.dataDir, 'keys', 'slots.bin'))
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

// The wipeout rebooted 50 ms after it answered, whether or not the disks had followed it: their
// ERASED records landed in the wipeout's boot or, when the storage service heard late, the next.
t.test('a wipeout reboots once the keys and the disks have followed it: their records are in its boot', async (t) => {
  const o = await owned(t, { variant: 'P' })
  const config = await login(o.base, 'system:config')
  await wipeout(o.base, o.device.dataDir, config)
  const { records } = await readJournal(o.device.dataDir)
  const wiped = records.findLastIndex((r) => r.type === LogType.CONFIG_UPDATED && r.decoded?.wipeout === true)
  const shutdown = records.findIndex((r, i) => i > wiped && r.type === LogType.SHUTDOWN)
  const erased = records
    .slice(wiped, shutdown)
    .filter((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'disk' && r.decoded?.to === 'unformatted')
  t.same(
    erased.map((r) => r.decoded?.instance).sort(),
    [0, 1],
    "both disks journal ERASED before the SHUTDOWN of the wipeout's boot",
  )
  t.equal(records[shutdown]?.file, records[wiped]?.file, 'in the same journal file')
})

t.test('wipeoutFollowed waits for the keystore and the storage service, or for its time limit', async (t) => {
  const { hal, connect, journal } = await scriptedIdentity(t, 'P', identity(true))
  const follower = async (service: string) => {
    const host = new ServiceHost<{ inited: boolean }>(await connect(service), hal.devid, service, {}, silentLogger)
    host.start()
    host.publishState({ inited: true })
    return host
  }
  const [keystore, storage] = [await follower('keystore'), await follower('storage')]
  const actor = new AuthActor(
    {
      nc: await connect('auth'),
      hal,
      journal,
      history: { records: [], intact: true, problems: [] },
      logger: silentLogger,
      reboot: async () => {},
      checkinOrder: async () => {},
    },
    () => ({}),
  )
  t.teardown(() => actor.stop())
  let followed = false
  const waiting = actor.wipeoutFollowed(60_000).then(() => (followed = true))
  keystore.publishState({ inited: false })
  await setTimeout(200)
  t.notOk(followed, 'the keys are erased, the disks not yet')
  storage.publishState({ inited: false })
  await waiting
  t.ok(followed, 'both followed')
  const started = Date.now()
  storage.publishState({ inited: true })
  await actor.wipeoutFollowed(100)
  t.ok(Date.now() - started < 10_000, 'a follower that never answers holds the reboot only up to the limit')
})
