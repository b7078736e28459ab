// A wipeout's reboot: it waits for the key store and the disks to follow the wipeout, and no longer
// than its time limit for a service that never does; an erasure that fails does not hold it back.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { updateConfig } from '../actors/auth/config-endpoint.js'
import { initChallenge, personalise } from '../actors/auth/personalise.js'
import { ServiceHost } from '../bus/service-host.js'
import { buildInitEjwt } from '../client/index.js'
import { LogType } from '../protocol/journal.js'
import { authActorOn } from './helpers/auth-actor.js'
import { manualClock } from './helpers/clock.js'
import { diskFiles, expectFresh, keyMedia } from './helpers/fresh-device.js'
import { readJournal } from './helpers/journal.js'
import { createKey, Tokens } from './helpers/keys.js'
import { silentLogger } from './helpers/logger.js'
import { wipeout } from './helpers/model-device.js'
import { defaultCfg, keys, login, MASTER_PASS, owned, USER_PASS } from './helpers/owner.js'
import { call } from './helpers/http.js'
import { identity, scriptedIdentity, type ScriptedIdentity } from './helpers/scripted-identity.js'
import { until } from './helpers/until.js'

/** Stands in for a service that follows the identity: its read model says whether it still holds anything. */
async function follower({ hal, connect }: Pick<ScriptedIdentity, 'hal' | 'connect'>, service: string, inited: boolean) {
  const host = new ServiceHost<{ inited: boolean }>(await connect(service), hal.devid, service, {}, silentLogger)
  host.start()
  host.publishState({ inited })
  return host
}

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

t.test('a wipeout restarts P fresh: no owner, no fault, the default hostname, no key, no disk', async (t) => {
  const o = await owned(t, { variant: 'P', cfg: { hostname: 'vault.lab' } })
  const tokens = new Tokens(o.base)
  for (const type of ['AES256', 'ED25519'])
    await createKey(o.https, await tokens.get('keymgmt:gen'), { label: type, type })
  t.equal((await call(`${o.base}/api/system/status`)).json.hostname, 'vault.lab')
  t.ok(
    (await keyMedia(o.device.dataDir)).some((b) => b !== 0),
    'sealed keys on the media before',
  )
  t.ok((await diskFiles(o.device.dataDir)).length > 0, 'formatted disks before')
  await wipeout(o.base, o.device.dataDir, await tokens.get('system:config'))
  await expectFresh(t, o.base, o.device.dataDir, 'P')
})

t.test('wipeoutFollowed waits for the keystore and the storage service, or for its time limit', async (t) => {
  // The limit runs on the device's clock, which only the test moves on.
  const LIMIT = 5_000
  const clock = manualClock()
  const { hal, connect, journal } = await scriptedIdentity(t, 'P', identity(true), { clock })
  const [keystore, storage] = [
    await follower({ hal, connect }, 'keystore', true),
    await follower({ hal, connect }, 'storage', true),
  ]
  const actor = await authActorOn(t, { hal, connect }, { journal })

  // Neither follower has erased anything: only the limit ends this wait.
  let limited = false
  const held = actor.wipeoutFollowed(LIMIT).then(() => (limited = true))
  await new Promise((resolve) => setImmediate(resolve))
  t.same(clock.armed(), [LIMIT], 'the wait arms its time limit')
  t.notOk(limited, 'followers that do not answer hold the reboot...')
  clock.advance(LIMIT)
  await held
  t.ok(limited, '...only until the limit')

  let followed = false
  const waiting = actor.wipeoutFollowed(60_000).then(() => (followed = true))
  keystore.publishState({ inited: false })
  await sleep(200)
  t.notOk(followed, 'the keys are erased, the disks not yet')
  storage.publishState({ inited: false })
  await waiting
  t.ok(followed, 'both followed')
})

// An erasure that threw skipped the rest: the old owner's configuration stayed in memory, the
// read model still said personalised, and no reboot was ordered.
t.test('a wipeout whose erasure fails is applied all the same, and reboots', async (t) => {
  const { hal, connect, journal } = await scriptedIdentity(t, 'E', identity(false))
  for (const service of ['keystore', 'storage']) await follower({ hal, connect }, service, false)
  let rebooted = false
  const actor = await authActorOn(t, { hal, connect }, { journal, reboot: async () => void (rebooted = true) })
  const challenge = initChallenge(actor).body as { exp: number; spk: string; jti: string; eid: string }
  const user = await keys.get(USER_PASS, challenge.eid)
  const master = await keys.get(MASTER_PASS, challenge.eid)
  const init = buildInitEjwt(master, challenge, defaultCfg('E', user, master), Math.floor(Date.now() / 1000))
  t.equal((await personalise(actor, { rid: 'init', tls: true, body: { init } })).status, 200)
  t.equal(actor.config.user, 'Ada')

  t.capture(hal.enclave, 'wipe', async () => {
    throw new Error('the enclave write failed')
  })
  const wipe = { rid: 'wipe', tls: true, principal: { sub: 'U', scope: 'system:config' }, body: { wipeout: true } }
  await t.rejects(updateConfig(actor, wipe), /the enclave write failed/, 'the failure is the answer')
  t.not(actor.config.user, 'Ada', "the old owner's configuration is gone")
  t.equal(actor.host.state?.inited, false, 'the read model shows the device wiped')
  await until('rebooted', () => rebooted)
})
