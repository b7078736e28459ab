// Model-based tests of the extAuth machine (machines/ext-auth.ts): every path generated from it, for a pairing's
// challenge (ext/init) and an approval's (ext/request), walked on one real device over HTTP, the test playing the
// phone. The machine is never journaled: after each step the device shows the state by what it answers the same
// challenge next, and the journal holds no TRANSITION of it.
import t, { type Test } from 'tap'
import { initialTransition, transition } from 'xstate'
import type { ExtAuthKind } from '../machines/ext-auth.js'
import { machineRegistry } from '../machines/registry.js'
import { stateName } from '../machines/replay.js'
import { LogType } from '../protocol/journal.js'
import { type Answer } from './helpers/http.js'
import { readJournal } from './helpers/journal.js'
import { checkCoverage, checkDrivers, modelPaths, type ModelPath, type PathOptions } from './helpers/model-paths.js'
import { authreply, brokerKey, newPhone, pair, pairingReply, post, type Phone } from './helpers/ext-phone.js'
import { login, owned, type Owned } from './helpers/owner.js'

const { machine: extAuthMachine } = machineRegistry.extAuth

/** The events each kind of challenge can be made to take; the other kind's success it cannot. */
const DRIVABLE: Record<ExtAuthKind, string[]> = {
  pairing: ['PAIRED', 'REFUSED'],
  approval: ['GRANTED', 'REFUSED', 'EXPIRED'],
}
const UNDRIVABLE = {}
const UNREACHED: Record<ExtAuthKind, Record<string, string>> = {
  pairing: {
    granted: 'a pairing challenge grants no bearer',
    // The book forgets a pairing challenge after its 24 h: the device never says EXPIRED of one.
    expired: 'a pairing challenge simply leaves the book at its end',
  },
  approval: { paired: 'an approval challenge pairs nothing' },
}

interface Device {
  o: Owned
  token: string
  /** Paired before any path: its key is stored, so a reply of its makes a pairing challenge REFUSED. */
  paired: Phone
}

/** One challenge of the path and what the phone answers it with. */
interface Challenge {
  kind: ExtAuthKind
  /** The answer that would succeed: the pairing reply of a new phone, or an allowing authreply. */
  good: () => Promise<Answer>
  /** Sends what the event stands for. */
  drive: Record<string, () => Promise<Answer>>
}

async function pairingChallenge(d: Device): Promise<Challenge> {
  const init = await post(d.o.base, 'init', { epk: brokerKey().epk }, d.token)
  const validate = (phone: Phone) =>
    post(d.o.base, 'validate', { pid: phone.pid, reply: pairingReply(phone, init.json.request) }, d.token)
  const fresh = newPhone()
  return {
    kind: 'pairing',
    good: () => validate(newPhone()),
    drive: { PAIRED: () => validate(fresh), REFUSED: () => validate(d.paired) },
  }
}

async function approvalChallenge(d: Device): Promise<Challenge> {
  const asked = await post(d.o.base, 'request', { epk: brokerKey().epk, scope: 'storage:disk0' })
  const exchange = (reply: string) => post(d.o.base, 'token', { authreply: reply })
  const now = Math.floor(Date.now() / 1000)
  return {
    kind: 'approval',
    good: () => exchange(authreply(d.paired, asked.json.authreq)),
    drive: {
      GRANTED: () => exchange(authreply(d.paired, asked.json.authreq)),
      REFUSED: () => exchange(authreply(d.paired, asked.json.authreq, { grant: () => 'storage:disk1' })),
      EXPIRED: () => exchange(authreply(d.paired, asked.json.authreq, { exp: now - 1 })),
    },
  }
}

/** What each event's answer is. */
const ANSWERS: Record<string, number> = { PAIRED: 200, GRANTED: 200, REFUSED: 406, EXPIRED: 401 }

/** What the same challenge answers its good answer in each state: once ended, it is gone (401 or 406). */
const observations: Record<string, (t: Test, c: Challenge) => Promise<unknown>> = {
  issued: async () => undefined,
  paired: async (t, c) => t.equal((await c.good()).status, 406, 'paired: the challenge is spent (406)'),
  granted: async (t, c) => t.equal((await c.good()).status, 401, 'granted: the approval is spent (401)'),
  refused: async (t, c) =>
    t.equal((await c.good()).status, c.kind === 'pairing' ? 406 : 401, 'refused: the challenge is spent'),
  expired: async (t, c) => t.equal((await c.good()).status, 401, 'expired: the approval is spent (401)'),
}

async function walk(t: Test, d: Device, kind: ExtAuthKind, path: ModelPath): Promise<void> {
  const challenge = await (kind === 'pairing' ? pairingChallenge(d) : approvalChallenge(d))
  let snapshot = initialTransition(extAuthMachine, { kind })[0]
  for (const step of path.steps) {
    const answer = await challenge.drive[step.event]!()
    t.equal(answer.status, ANSWERS[step.event], `${step.event}: ${ANSWERS[step.event]} (${answer.text.slice(0, 80)})`)
    snapshot = transition(extAuthMachine, snapshot, { type: step.event } as never)[0]
    t.equal(stateName(snapshot), step.to, `the model: ${step.to}`)
  }
  await observations[path.end]!(t, challenge)
}

t.test('extAuth: every path of both kinds of challenge', async (t) => {
  checkDrivers(t, extAuthMachine, [...new Set(Object.values(DRIVABLE).flat())], UNDRIVABLE)
  for (const state of Object.keys(extAuthMachine.states)) t.ok(state in observations, `${state} has an observation`)
  const o = await owned(t)
  const token = await login(o.base, 'auth:ext:pair')
  const d: Device = { o, token, paired: newPhone() }
  t.equal((await pair(o.base, token, d.paired)).status, 200, 'a phone paired for the paths')
  for (const kind of ['pairing', 'approval'] as const) {
    const options: PathOptions = { input: { kind }, drivable: DRIVABLE[kind] }
    const paths = modelPaths(extAuthMachine, options)
    checkCoverage(t, extAuthMachine, paths, options, UNREACHED[kind])
    for (const path of paths) await t.test(`${kind}: ${path.name}`, (t) => walk(t, d, kind, path))
  }
  const { records } = await readJournal(o.device.dataDir)
  t.notOk(
    records.some((r) => r.type === LogType.TRANSITION && r.decoded?.machine === 'extAuth'),
    'no TRANSITION of the machine is journaled',
  )
})
