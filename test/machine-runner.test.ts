import t from 'tap'
import { assign, setup } from 'xstate'
import { EventRefusedError } from '../actors/host/event-refused-error.js'
import { MachineRunner } from '../actors/host/machine-runner.js'
import type { JournalPort } from '../actors/host/journal-port.js'
import { LogType, type JournalEntry } from '../protocol/journal.js'
import { lifecycleMachine, lifecycleVersion } from '../machines/lifecycle.js'
import { noHead } from './helpers/journal.js'
import { personalisationRunner } from './helpers/runners.js'

function memoryJournal(fail = false) {
  const appended: JournalEntry[][] = []
  const port: JournalPort = {
    append: async (entries) => {
      if (fail) throw new Error('disk full')
      appended.push(entries)
      return entries.map((_, seq) => ({ file: '00000001', seq }))
    },
    status: async () => ({ fileId: '00000001', intact: true }),
    head: noHead,
  }
  return { port, appended }
}

const spec = { machine: lifecycleMachine, version: lifecycleVersion }

t.test('a transition is journaled with machine id and version, together with the audit entries', async (t) => {
  const { port, appended } = memoryJournal()
  const runner = new MachineRunner(spec, port)
  t.equal(runner.state, 'booting')
  const step = await runner.send({ type: 'READY' })
  t.same(step, { from: 'booting', to: 'running', changed: true })
  await runner.send({ type: 'STOP' }, [{ type: LogType.SHUTDOWN, result: 0 }], 'U')
  t.same(appended, [
    [
      {
        type: LogType.TRANSITION,
        result: 0,
        data: { machine: 'lifecycle', version: 1, from: 'booting', to: 'running', event: 'READY' },
      },
    ],
    [
      {
        type: LogType.TRANSITION,
        result: 0,
        data: { machine: 'lifecycle', version: 1, from: 'running', to: 'stopped', event: 'STOP' },
        subject: 'U',
      },
      { type: LogType.SHUTDOWN, result: 0 },
    ],
  ])
})

/** A small machine: a self-transition it takes, a guard on context, a state that takes nothing. */
const door = setup({
  types: { context: {} as { knocks: number }, events: {} as { type: 'OPEN' | 'CLOSE' | 'KNOCK' | 'WAIT' } },
  guards: { knockedTwice: ({ context }) => context.knocks >= 2 },
}).createMachine({
  id: 'door',
  context: { knocks: 0 },
  initial: 'closed',
  states: {
    closed: {
      on: {
        KNOCK: { actions: assign({ knocks: ({ context }) => context.knocks + 1 }) },
        OPEN: { guard: 'knockedTwice', target: 'open' },
        CLOSE: 'closed',
        // Targetless and without actions: xstate calls such a transition forbidden.
        WAIT: {},
      },
    },
    open: { on: { CLOSE: 'closed' } },
  },
})
const doorSpec = { machine: door, version: 3, instance: 'front' }

t.test('an event the machine cannot take is refused: typed, nothing journaled, nothing changed', async (t) => {
  const { port, appended } = memoryJournal()
  const runner = new MachineRunner(doorSpec, port)
  t.notOk(runner.can({ type: 'OPEN' }), 'the guard holds the door')
  const refused = await runner.send({ type: 'OPEN' }, [{ type: LogType.SELFTEST_PASSED, result: 0 }], 'U').then(
    () => undefined,
    (err: unknown) => err,
  )
  t.type(refused, EventRefusedError)
  t.match(refused, { name: 'EventRefusedError', machine: 'door', instance: 'front', state: 'closed', event: 'OPEN' })
  t.match((refused as Error).message, /door front in closed cannot take OPEN/)
  await t.rejects(runner.send({ type: 'WAIT' }), EventRefusedError, 'a forbidden transition is a refusal too')
  t.same(appended, [], "not even the caller's entries")
  t.ok(runner.matches('closed'))
  t.equal(runner.snapshot.context.knocks, 0)

  await runner.send({ type: 'KNOCK' })
  await runner.send({ type: 'KNOCK' })
  t.ok(runner.can({ type: 'OPEN' }), 'the guard on context lets it through now')
  t.same(await runner.send({ type: 'OPEN' }), { from: 'closed', to: 'open', changed: true })
  t.ok(runner.matches('open'))
  await t.rejects(
    runner.send({ type: 'KNOCK' }),
    new EventRefusedError('door', 'front', 'open', 'KNOCK'),
    'open takes no KNOCK',
  )
  t.equal(appended.length, 3, 'two knocks (a change of context) and the opening')
})

t.test('a self-transition the machine takes is no refusal: only the audit entries are written', async (t) => {
  const { port, appended } = memoryJournal()
  const runner = new MachineRunner(doorSpec, port)
  t.ok(runner.can({ type: 'CLOSE' }))
  const step = await runner.send({ type: 'CLOSE' }, [{ type: LogType.SELFTEST_PASSED, result: 0 }])
  t.same(step, { from: 'closed', to: 'closed', changed: false })
  t.same(appended, [[{ type: LogType.SELFTEST_PASSED, result: 0 }]])
  await runner.send({ type: 'CLOSE' })
  t.equal(appended.length, 1, 'nothing at all to append: no write')
})

t.test('when the journal refuses, the state does not change (fail-closed audit)', async (t) => {
  const { port } = memoryJournal(true)
  const runner = new MachineRunner(spec, port)
  await t.rejects(runner.send({ type: 'READY' }), /disk full/)
  t.equal(runner.state, 'booting')
})

t.test('matches names the states of the machine itself', async (t) => {
  const runner = new MachineRunner(spec, memoryJournal().port)
  t.ok(runner.matches('booting'))
  t.notOk(runner.matches('running'))
  // @ts-expect-error: a state the lifecycle machine does not have is not a state name at all
  t.notOk(runner.matches('bootin'))
})

/** A journal that takes a while over each append, as a busy group commit does. */
function slowJournal() {
  const appended: JournalEntry[][] = []
  const port: JournalPort = {
    append: async (entries) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      appended.push(entries)
      return entries.map((_, seq) => ({ file: '00000001', seq }))
    },
    status: async () => ({ fileId: '00000001', intact: true }),
    head: noHead,
  }
  return { port, appended }
}

t.test(
  'concurrent sends decide one after the other: the second is refused once the first made it impossible',
  async (t) => {
    const { port, appended } = slowJournal()
    const runner = personalisationRunner(port)
    await runner.send({ type: 'PERSONALISE' })
    t.ok(runner.matches('formatting'))
    appended.length = 0

    const wipeout = runner.send({ type: 'WIPEOUT' })
    t.ok(runner.can({ type: 'FORMAT_DONE' }), 'possible while the wipeout is being journaled...')
    const formatDone = runner.send({ type: 'FORMAT_DONE' }).then(
      () => undefined,
      (err: unknown) => err,
    )
    t.same(await wipeout, { from: 'formatting', to: 'fresh', changed: true })
    t.match(
      await formatDone,
      new EventRefusedError('personalisation', undefined, 'fresh', 'FORMAT_DONE'),
      '...refused once it has been',
    )
    t.same(
      appended.map((records) => records.map((r) => [r.data?.from, r.data?.to, r.data?.event])),
      [[['formatting', 'fresh', 'WIPEOUT']]],
      'one transition from formatting: the journal replays',
    )
    t.ok(runner.matches('fresh'))
  },
)
