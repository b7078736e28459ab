// Model-based tests of the key lifecycle machine: every path generated from machines/key-lifecycle.ts
// runs on its own key store (a real repository on sim media, real crypto, a journal the test holds
// so that it can hold back or refuse an append). After each step the journal holds exactly the
// step's TRANSITION record (none for BOOT: a boot rebuilds keys from the repository, unjournaled),
// and the key answers as the state says.
import t, { type Test } from 'tap'
import { transition } from 'xstate'
import { hmac } from '../actors/keystore/crypto-hmac.js'
import { cryptoOperation } from '../actors/keystore/crypto-operation.js'
import { createKey, deleteKey, getKey } from '../actors/keystore/key-management.js'
import type { KeystoreContext } from '../actors/keystore/keystore-context.js'
import type { KeyEvent } from '../machines/key-lifecycle.js'
import { machineRegistry } from '../machines/registry.js'
import { stateName } from '../machines/replay.js'
import { type JournalEntry, LogType } from '../protocol/journal.js'
import { testKeystore, type TestKeystore } from './helpers/keystore-context.js'
import { checkCoverage, checkDrivers, expectedRecord, modelPaths, type ModelPath } from './helpers/model-paths.js'

const { machine: keyLifecycleMachine, version: keyLifecycleVersion } = machineRegistry.key
const spec = { machine: keyLifecycleMachine, version: keyLifecycleVersion }

/** One key store, its key, and the KEY_DELETE append a RETIRE left waiting (DELETE lets it go, RESTORE refuses it). */
interface Store {
  ks: TestKeystore
  actor: KeystoreContext
  kid: string
  held?: { release: (err?: Error) => void; deleting: Promise<unknown> }
  hold?: () => void
}

async function boot(t: Test): Promise<Store> {
  const store = {} as Store
  store.ks = await testKeystore(t, {
    beforeAppend: async (entries) => {
      if (!entries.some((e) => e.type === LogType.KEY_DELETE)) return
      const err = await new Promise<Error | undefined>((release) => {
        store.held = { ...store.held!, release }
        store.hold?.()
      })
      if (err) throw err
    },
  })
  store.actor = store.ks.actor
  return store
}

const use = (s: Store) =>
  cryptoOperation(s.actor, s.ks.raw(`keymgmt:use:${s.kid}`, { kid: s.kid, msg: 'aGk=' }), hmac.hash)
const get = (s: Store) => getKey(s.actor, { ...s.ks.req(`keymgmt:use:${s.kid}`, undefined), params: { kid: s.kid } })
const remove = (s: Store) => deleteKey(s.actor, { ...s.ks.req('keymgmt:del', undefined), params: { kid: s.kid } })

const drivers: Record<string, (s: Store) => Promise<void>> = {
  ADD: async (s) => {
    const made = await createKey(s.actor, s.ks.req('keymgmt:gen', { label: 'model', type: 'SHA2-256' }))
    s.kid = (made.body as { kid: string }).kid
  },
  RETIRE: async (s) => {
    const waiting = new Promise<void>((resolve) => (s.hold = resolve))
    const deleting = remove(s).catch((err: unknown) => err)
    s.held = { release: () => undefined, deleting }
    await waiting
  },
  DELETE: async (s) => {
    s.held!.release()
    await s.held!.deleting
  },
  RESTORE: async (s) => {
    s.held!.release(new Error('the journal is out of reach'))
    await s.held!.deleting
  },
  // A power-up: the next boot's key store over the same media (the waiting deletion never ends).
  BOOT: async (s) => {
    s.actor = await s.ks.reboot()
  },
  INVALIDATED: async (s) => {
    // The self-test's check, as the keystore actor runs it: the damaged key's machine learns it.
    await s.actor.repository.damageImage(s.actor.repository.location(s.kid)!._addr)
    const invalidated: string[] = []
    await s.actor.repository.verifyRecords((kid) => invalidated.push(kid))
    for (const kid of invalidated) await s.actor.keys.send(kid, { type: 'INVALIDATED' })
  },
}

const observations: Record<string, (t: Test, s: Store) => Promise<void>> = {
  created: async (t, s) => {
    t.equal(s.actor.repository.keys().length, 0, 'no key is stored')
  },
  in_service: async (t, s) => {
    t.equal((await use(s)).status, 200, 'an HMAC with it: 200')
    t.equal((await get(s)).status, 200, 'get: 200')
  },
  deleting: async (t, s) => {
    t.ok(s.actor.repository.has(s.kid), 'still stored while its KEY_DELETE waits')
    t.match(await use(s), { status: 406, body: { error: 'key_not_found' } }, 'out of service: 406')
    t.match(await remove(s), { status: 404 }, 'deleted twice: 404')
  },
  deleted: async (t, s) => {
    t.notOk(s.actor.repository.has(s.kid), 'gone from the repository')
    t.match(await use(s), { status: 406 }, 'an HMAC with it: 406')
    t.equal(s.actor.keys.state(s.kid), undefined, 'its machine has ended')
  },
  invalid: async (t, s) => {
    t.notOk(s.actor.repository.has(s.kid), 'left memory with its slot')
    t.match(await use(s), { status: 406 }, 'an HMAC with it: 406')
    t.match(await get(s), { status: 404 }, 'get: 404')
  },
}

/** The key's state as the key store holds it: a key whose machine ended has none. */
const stateOf = (s: Store) => (s.kid === undefined ? 'created' : (s.actor.keys.state(s.kid) ?? 'deleted'))

async function walk(t: Test, path: ModelPath): Promise<void> {
  const s = await boot(t)
  const transitions = () => s.ks.journaled.filter((e: JournalEntry) => e.type === LogType.TRANSITION)
  let snapshot = keyLifecycleMachine.resolveState({ value: 'created', context: {} })
  for (const step of path.steps) {
    const before = transitions().length
    await drivers[step.event]!(s)
    snapshot = transition(keyLifecycleMachine, snapshot, { type: step.event } as KeyEvent)[0]
    const gained = transitions().slice(before)
    if (step.event === 'BOOT') t.same(gained, [], 'BOOT: nothing journaled')
    else t.match(gained, [{ data: expectedRecord({ ...spec, instance: s.kid }, step) }], `${step.event} journaled`)
    t.equal(gained.length, step.event === 'BOOT' ? 0 : 1, `${step.event}: one record at most`)
    t.equal(stateOf(s), stateName(snapshot), `the key store holds the key ${stateName(snapshot)}`)
    await t.test(`in ${stateName(snapshot)} after ${step.event}`, (t) => observations[stateName(snapshot)]!(t, s))
  }
}

const undrivable = {
  ADD_FAILED: 'a slot write that fails: key-repo-torn.test.ts drives it with its failing media and checks its record',
  UPDATE: 'a self-transition, journaled as its KEY_ATTRIBUTES_CHANGED alone: keymgmt-update.test.ts',
}
const drivable = Object.keys(drivers)
const options = { drivable }
const paths = modelPaths(keyLifecycleMachine, options)

t.test('every event has a driver and every state an observation', async (t) => {
  checkDrivers(t, keyLifecycleMachine, drivable, undrivable)
  checkCoverage(t, keyLifecycleMachine, paths, options)
  for (const state of Object.keys(keyLifecycleMachine.states)) t.ok(state in observations, `${state} is observed`)
})

t.test(`${paths.length} paths, each on its own key store`, async (t) => {
  for (const path of paths) await t.test(path.name, (t) => walk(t, path))
})
