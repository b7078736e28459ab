// The auth actor's memory over a device's life: what it keeps of the boot history it folds.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { AuthActor } from '../actors/auth/auth-actor.js'
import type { JournalHistory } from '../eventstore/journal-history.js'
import { silentLogger } from './helpers/logger.js'
import { identity, scriptedIdentity } from './helpers/scripted-identity.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

// The auth actor kept the history it was built from, and with it the bytes of every journal
// file (14 MB with 100 000 records), for as long as the device ran.
t.test('the auth actor does not keep the history it folded', async (t) => {
  const { hal, connect, journal } = await scriptedIdentity(t, 'P', identity(true))
  const nc = await connect('auth')
  const build = (): { actor: AuthActor; history: WeakRef<JournalHistory> } => {
    const history: JournalHistory = { records: [], intact: true, problems: [] }
    const actor = new AuthActor(
      { nc, hal, journal, history, logger: silentLogger, reboot: async () => {}, checkinOrder: async () => {} },
      () => ({}),
    )
    return { actor, history: new WeakRef(history) }
  }
  const { actor, history } = build()
  t.teardown(() => actor.stop())
  // A WeakRef's target is kept until the current job ends.
  await new Promise((resolve) => setImmediate(resolve))
  gc()
  t.equal(history.deref(), undefined, 'the history is collected once folded')
  t.equal(actor.intact, true, 'what the actor needs of it is kept')
})
