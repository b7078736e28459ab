// The registry is the one list of the device's machines: each is run by its actor, folded by
// `hem-audit replay` and walked by its model test. A machine missing any of them fails here.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { initialTransition, StateMachine, transition } from 'xstate'
import * as machines from '../machines/index.js'
import {
  MachineFolds,
  machineRegistry,
  registeredMachines,
  stateName,
  type RegisteredMachine,
} from '../machines/index.js'
import type { TransitionData } from '../protocol/index.js'
import { KeyFolds } from '../audit/key-replay.js'

/** The folds of machines run one per subject: each is its own, beside MachineFolds. */
const SUBJECT_FOLDS: Record<string, { fold: () => KeyFolds; subject: string }> = {
  key: { fold: () => new KeyFolds(), subject: '00112233445566778899aabbccddeeff' },
}

const root = new URL('..', import.meta.url).pathname
const source = (file: string) => readFile(join(root, file), 'utf8')

async function unitSources(unit: string): Promise<string[]> {
  const dir = join(root, 'actors', unit)
  const files = (await readdir(dir)).filter((f) => f.endsWith('.ts'))
  return Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')))
}

/** The first event of its initial state that moves the machine, as the record of that step. */
function firstStep(entry: RegisteredMachine, instance: string | undefined, input: unknown): TransitionData {
  const start = initialTransition(entry.machine, input)[0]
  const node = (entry.machine.root.states as Record<string, { on: Record<string, unknown> }>)[stateName(start)]!
  for (const event of Object.keys(node.on)) {
    const next = transition(entry.machine, start, { type: event })[0]
    if (stateName(next) !== stateName(start))
      return {
        machine: entry.machine.id,
        ...(instance !== undefined ? { instance } : {}),
        version: entry.version,
        from: stateName(start),
        to: stateName(next),
        event,
      }
  }
  throw new Error(`${entry.machine.id} cannot leave its initial state`)
}

t.test('every machine the machines/ face exports is registered, under its own id', async (t) => {
  const exported = Object.entries(machines).filter(([, value]) => value instanceof StateMachine)
  t.ok(exported.length >= registeredMachines.length, 'machines are found among the exports')
  for (const [name, machine] of exported)
    t.ok(
      registeredMachines.some((entry) => entry.machine === machine),
      `${name} is in machines/registry.ts`,
    )
  for (const [id, entry] of Object.entries(machineRegistry)) t.equal(entry.machine.id, id, `${id}: the key is its id`)
})

for (const [id, entry] of Object.entries(machineRegistry) as [string, RegisteredMachine][]) {
  t.test(`${id}: its actor runs it from the registry`, async (t) => {
    const sources = await unitSources(entry.actor)
    t.ok(
      sources.some((text) => text.includes(`machineRegistry.${id}`)),
      `actors/${entry.actor} builds its runner from machineRegistry.${id}`,
    )
  })

  t.test(`${id}: its model test walks it from the registry and checks coverage`, async (t) => {
    const text = await source(entry.modelTest)
    t.ok(text.includes(`machineRegistry.${id}`), `${entry.modelTest} takes the machine from the registry`)
    t.ok(text.includes('modelPaths('), `${entry.modelTest} generates its paths with xstate/graph`)
    t.ok(text.includes('checkCoverage('), `${entry.modelTest} checks every state and transition is walked`)
  })

  t.test(`${id}: hem-audit replay folds every instance on both variants`, async (t) => {
    if (entry.subjects !== undefined) {
      const folds = SUBJECT_FOLDS[id]
      if (!t.ok(folds, `${id} runs one per ${entry.subjects}: it has a fold of its own`)) return
      const step = firstStep(entry, folds!.subject, undefined)
      const fold = folds!.fold()
      t.ok(fold.owns(step), `the fold owns ${id} ${folds!.subject}`)
      fold.apply(step)
      t.equal(fold.states()[folds!.subject], step.to, `the fold follows ${step.event}`)
      return
    }
    for (const variant of ['P', 'E'] as const) {
      const instances = entry.instances(variant)
      for (const { instance, input } of instances) {
        const folds = new MachineFolds(variant, entry.lifetime)
        const step = firstStep(entry, instance, input)
        t.ok(folds.owns(step), `${variant}: a fold owns ${id} ${instance ?? ''}`)
        folds.apply(step)
        t.equal(folds.state(id, instance), step.to, `${variant}: the fold follows ${step.event}`)
        const other = new MachineFolds(variant, entry.lifetime === 'boot' ? 'device' : 'boot')
        t.notOk(other.owns(step), `${variant}: only its lifetime's folds own it`)
      }
    }
  })
}
