// A wipeout's reboot: it waits for the key store and the disks to follow the wipeout, and no longer
// than its time limit for a service that never does.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { AuthActor } from '../actors/auth/auth-actor.js'
import { ServiceHost } from '../bus/service-host.js'
import { LogType } from '../protocol/journal.js'
import { readJournal } from './helpers/journal.js'
import { silentLogger } from './helpers/logger.js'
import { wipeout } from './helpers/model-device.js'
import { login, owned } from './helpers/owner.js'
import { identity, scriptedIdentity } from './helpers/scripted-identity.js'
import { captureTimers } from './helpers/timers.js'

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
  // The limit's timer is the test's to fire: a delay no other timer of the process uses marks it.
  const LIMIT = 54_321
  const limits = captureTimers(t, LIMIT).held

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

  // Neither follower has erased anything: only the limit ends this wait.
  let limited = false
  const held = actor.wipeoutFollowed(LIMIT).then(() => (limited = true))
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(limits.length, 1, 'the wait arms its time limit')
  t.notOk(limited, 'followers that do not answer hold the reboot...')
  limits[0]!()
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
