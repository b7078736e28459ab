// Personalisation stores the owner's keys before it is journaled: an enclave that cannot store
// them leaves the device fresh (personalised without keys, nobody could ever log in), and a journal
// that refuses the personalisation leaves no keys behind. The auth actor in process, real P HAL.
import t, { type Test } from 'tap'
import { initChallenge, personalise } from '../actors/auth/personalise.js'
import { BusUnavailableError } from '../bus/errors.js'
import { buildInitEjwt } from '../client/index.js'
import { LogType } from '../protocol/journal.js'
import { authActorOn } from './helpers/auth-actor.js'
import { defaultCfg, keys, MASTER_PASS, USER_PASS } from './helpers/owner.js'
import { identity, refusingJournal, scriptedIdentity } from './helpers/scripted-identity.js'

async function setup(t: Test) {
  const scripted = await scriptedIdentity(t, 'E', identity(false))
  const { hal, connect, journaled } = scripted
  let journaling = true
  const actor = await authActorOn(t, { hal, connect }, { journal: refusingJournal(scripted, () => !journaling) })
  const init = async () => {
    const challenge = initChallenge(actor).body as { exp: number; spk: string; jti: string; eid: string }
    const user = await keys.get(USER_PASS, challenge.eid)
    const master = await keys.get(MASTER_PASS, challenge.eid)
    const ejwt = buildInitEjwt(master, challenge, defaultCfg('E', user, master), Math.floor(Date.now() / 1000))
    return personalise(actor, { rid: 'init', tls: true, body: { init: ejwt } })
  }
  return { hal, actor, journaled, init, setJournaling: (on: boolean) => void (journaling = on) }
}

t.test('an enclave that cannot store the keys: nothing journaled, the device stays fresh', async (t) => {
  const { hal, actor, journaled, init } = await setup(t)
  const store = hal.enclave.setCredentials.bind(hal.enclave)
  t.capture(hal.enclave, 'setCredentials', async () => {
    throw new Error('the enclave write failed')
  })
  await t.rejects(init(), /the enclave write failed/)
  t.ok(actor.fresh, 'still fresh: a new owner may personalise it')
  t.notOk(
    journaled.some((e) => e.type === LogType.DEVICE_INITED),
    'no DEVICE_INITED',
  )

  t.capture(hal.enclave, 'setCredentials', store)
  t.equal((await init()).status, 200)
  t.notOk(actor.fresh)
  t.ok(hal.enclave.credentials(), 'the keys are stored')
})

t.test('a journal that refuses the personalisation: the stored keys are cleared again', async (t) => {
  const { hal, actor, init, setJournaling } = await setup(t)
  let stored = false
  const store = hal.enclave.setCredentials.bind(hal.enclave)
  t.capture(hal.enclave, 'setCredentials', async (credentials) => {
    await store(credentials)
    stored = true
  })
  setJournaling(false)
  await t.rejects(init(), BusUnavailableError)
  t.ok(stored, 'the keys were stored first')
  t.equal(hal.enclave.credentials(), undefined, 'and cleared again')
  t.ok(actor.fresh)
})
