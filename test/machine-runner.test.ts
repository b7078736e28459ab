import t from 'tap'
import { MachineRunner } from '../actors/host/machine-runner.js'
import type { JournalPort } from '../actors/host/journal-port.js'
import { LogType, type JournalEntry } from '../protocol/journal.js'
import { lifecycleMachine, lifecycleVersion } from '../machines/lifecycle.js'

function memoryJournal(fail = false) {
  const appended: JournalEntry[][] = []
  const port: JournalPort = {
    append: async (entries) => {
      if (fail) throw new Error('disk full')
      appended.push(entries)
      return entries.map((_, seq) => ({ file: '00000001', seq }))
    },
    status: async () => ({ fileId: '00000001', intact: true }),
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

t.test('an event the machine ignores writes only the audit entries', async (t) => {
  const { port, appended } = memoryJournal()
  const runner = new MachineRunner(spec, port)
  await runner.send({ type: 'READY' })
  const step = await runner.send({ type: 'READY' }, [{ type: LogType.SELFTEST_PASSED, result: 0 }])
  t.equal(step.changed, false)
  t.same(appended.at(-1), [{ type: LogType.SELFTEST_PASSED, result: 0 }])
  await runner.send({ type: 'READY' })
  t.equal(appended.length, 2, 'nothing at all to append: no write')
})

t.test('when the journal refuses, the state does not change (fail-closed audit)', async (t) => {
  const { port } = memoryJournal(true)
  const runner = new MachineRunner(spec, port)
  await t.rejects(runner.send({ type: 'READY' }), /disk full/)
  t.equal(runner.state, 'booting')
})
