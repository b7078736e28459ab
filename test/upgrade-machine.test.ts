// The upgrade machine alone: the transitions its journal records may hold (the table version 1
// wrote, which every journal of this machine replays through), and the rules it holds as guards
// and context (a downgrade needs the owner's word, a trial in a fail state is not confirmed, a
// new upload forgets the last check).
import t from 'tap'
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate'
import { ReplayError, replayTransitions, stateName } from '../machines/replay.js'
import { upgradeMachine, upgradeVersion, type UpgradeEvent } from '../machines/upgrade.js'
import type { TransitionData } from '../protocol/journal.js'

/** Every transition the version 1 machine took: `from EVENT to`. */
const VERSION_1 = [
  'idle UPLOAD_STARTED receiving',
  'idle TRIAL_BOOT confirming',
  'idle ROLLED_BACK rolled_back',
  'confirming CONFIRMED committed',
  'receiving UPLOAD_FINISHED uploaded',
  'receiving UPLOAD_FAILED idle',
  'uploaded UPLOAD_STARTED receiving',
  'uploaded CHECK_STARTED checking',
  'checking CHECK_PASSED verified',
  'checking CHECK_FAILED rejected',
  'verified UPLOAD_STARTED receiving',
  'verified INSTALL_STARTED installing',
  'rejected UPLOAD_STARTED receiving',
  'installing INSTALL_FINISHED installed',
  'installing INSTALL_FAILED verified',
  'installed UPLOAD_STARTED receiving',
  'committed UPLOAD_STARTED receiving',
  'rolled_back UPLOAD_STARTED receiving',
].map((line) => line.split(' ') as [string, string, string])

const states = [...new Set(VERSION_1.flatMap(([from, , to]) => [from, to]))]
const events = [...new Set(VERSION_1.map(([, event]) => event))]

/** The snapshot a replay reaches `state` with: the shortest dataless way there. */
function reach(state: string): AnyMachineSnapshot {
  const seen = new Map<string, AnyMachineSnapshot>([['idle', initialTransition(upgradeMachine, { kind: 'fw' })[0]]])
  for (let changed = true; changed && !seen.has(state);) {
    changed = false
    for (const [from, event, to] of VERSION_1) {
      if (!seen.has(from) || seen.has(to)) continue
      seen.set(to, transition(upgradeMachine, seen.get(from)!, { type: event } as UpgradeEvent)[0])
      changed = true
    }
  }
  return seen.get(state)!
}

const record = (from: string, event: string, to: string, version = upgradeVersion): TransitionData => ({
  machine: 'upgrade',
  instance: 'fw',
  version,
  from,
  to,
  event,
})

t.test('the dataless machine takes exactly the transitions of version 1: its records replay', async (t) => {
  const taken: string[] = []
  for (const from of states) {
    for (const event of events) {
      const before = reach(from)
      if (!before.can({ type: event } as UpgradeEvent)) continue
      taken.push(
        `${from} ${event} ${stateName(transition(upgradeMachine, before, { type: event } as UpgradeEvent)[0])}`,
      )
    }
  }
  t.same(taken.sort(), VERSION_1.map((r) => r.join(' ')).sort(), 'a changed transition needs a new version')
  t.equal(upgradeVersion, 1, 'so the version stays 1')
  // A journal of version 1 through every transition: a trial confirmed, then a whole upgrade and its refusals.
  const journal = [
    record('idle', 'TRIAL_BOOT', 'confirming'),
    record('confirming', 'CONFIRMED', 'committed'),
    record('committed', 'UPLOAD_STARTED', 'receiving'),
    record('receiving', 'UPLOAD_FINISHED', 'uploaded'),
    record('uploaded', 'CHECK_STARTED', 'checking'),
    record('checking', 'CHECK_PASSED', 'verified'),
    record('verified', 'INSTALL_STARTED', 'installing'),
    record('installing', 'INSTALL_FAILED', 'verified'),
    record('verified', 'INSTALL_STARTED', 'installing'),
    record('installing', 'INSTALL_FINISHED', 'installed'),
  ]
  t.equal(stateName(replayTransitions(upgradeMachine, 1, journal, { kind: 'fw' }, 'fw')), 'installed')
  t.throws(
    () => replayTransitions(upgradeMachine, 1, [record('idle', 'TRIAL_BOOT', 'confirming', 2)], { kind: 'fw' }, 'fw'),
    ReplayError,
    'a version this runtime does not know is refused',
  )
})

const verifiedWith = (downgrade: string | false) => {
  const checking = reach('checking')
  return transition(upgradeMachine, checking, { type: 'CHECK_PASSED', sha256: 'ab'.repeat(32), downgrade })[0]
}

t.test('a downgrade installs only with the owner’s word; an image that goes forward needs none', async (t) => {
  const back = verifiedWith('0.1.0 goes back')
  t.same(back.context.verified, { sha256: 'ab'.repeat(32), downgrade: '0.1.0 goes back' }, 'the check’s data')
  t.notOk(back.can({ type: 'INSTALL_STARTED', allowDowngrade: false }), 'refused without the confirmation')
  t.ok(back.can({ type: 'INSTALL_STARTED', allowDowngrade: true }), 'taken with it')
  t.ok(verifiedWith(false).can({ type: 'INSTALL_STARTED', allowDowngrade: false }), 'forward: no word needed')
})

t.test('a trial in a fail state is not confirmed; a confirmed one stays confirmed for the boot', async (t) => {
  const trial = transition(upgradeMachine, reach('idle'), { type: 'TRIAL_BOOT' })[0]
  t.notOk(trial.can({ type: 'CONFIRMED', fls: 0x01 }), 'a fault bit refuses')
  t.notOk(trial.can({ type: 'CONFIRMED', fls: 0xff }), 'so does an unknown fail state')
  const committed = transition(upgradeMachine, trial, { type: 'CONFIRMED', fls: 0 })[0]
  t.equal(stateName(committed), 'committed')
  const next = transition(upgradeMachine, committed, { type: 'UPLOAD_STARTED' })[0]
  t.equal(next.context.confirmed, true, 'status.fw_upgrade holds through a later upload')
  t.equal(reach('idle').context.confirmed, false, 'not before')
})

t.test('the check’s outcome is the machine’s until the next upload', async (t) => {
  const rejected = transition(upgradeMachine, reach('checking'), {
    type: 'CHECK_FAILED',
    rejection: 'signature: bad',
  })[0]
  t.equal(rejected.context.rejection, 'signature: bad')
  const again = transition(upgradeMachine, rejected, { type: 'UPLOAD_STARTED' })[0]
  t.equal(again.context.rejection, undefined, 'a new upload forgets the rejection')
  const verified = transition(upgradeMachine, verifiedWith(false), { type: 'UPLOAD_STARTED' })[0]
  t.equal(verified.context.verified, undefined, 'and the verified image')
})
