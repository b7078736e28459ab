import t from 'tap'
import { initialTransition } from 'xstate'
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph'
import { bootMode, disk1Cipher, diskMachine, diskVersion } from '../machines/disk.js'
import { replayTransitions, stateName } from '../machines/replay.js'

const EVENTS = [
  { type: 'FORMATTED' },
  { type: 'UNLOCK_RO' },
  { type: 'UNLOCK_RW' },
  { type: 'LOCK' },
  { type: 'ERASED' },
] as const
const STATES = ['unformatted', 'locked', 'ro', 'rw']

/** state -> event -> next state: the seed's lock table from any formatted state, plus format and erase. */
const TABLE: Record<string, Record<string, string>> = {
  unformatted: {
    FORMATTED: 'locked',
    UNLOCK_RO: 'unformatted',
    UNLOCK_RW: 'unformatted',
    LOCK: 'unformatted',
    ERASED: 'unformatted',
  },
  locked: { FORMATTED: 'locked', UNLOCK_RO: 'ro', UNLOCK_RW: 'rw', LOCK: 'locked', ERASED: 'unformatted' },
  ro: { FORMATTED: 'ro', UNLOCK_RO: 'ro', UNLOCK_RW: 'rw', LOCK: 'locked', ERASED: 'unformatted' },
  rw: { FORMATTED: 'rw', UNLOCK_RO: 'ro', UNLOCK_RW: 'rw', LOCK: 'locked', ERASED: 'unformatted' },
}

/** The steps of a graph path without the initial pseudo-step (`xstate.init`). */
const steps = <S>(path: { steps: { event: { type: string }; state: S }[] }) =>
  path.steps.filter((step) => step.event.type !== 'xstate.init')

const traversal = (disk: 0 | 1) => ({
  input: { disk },
  events: EVENTS,
  serializeState: (s: { value: unknown }) => stateName(s),
})

t.test('starts unformatted, knows its disk, version 1', async (t) => {
  t.equal(diskVersion, 1)
  for (const disk of [0, 1] as const) {
    const [snapshot] = initialTransition(diskMachine, { disk })
    t.equal(snapshot.value, 'unformatted')
    t.same(snapshot.context, { disk })
    t.same(JSON.parse(JSON.stringify(snapshot.context)), { disk }, 'context is serialisable')
  }
  for (const disk of [2, -1, '0', undefined]) {
    // XState keeps what the context factory throws in the snapshot rather than rethrowing it.
    const [snapshot] = initialTransition(diskMachine, { disk } as never)
    t.equal(snapshot.status, 'error', `disk ${String(disk)}`)
    t.type(snapshot.error, RangeError)
  }
})

t.test('xstate/graph walks to every state from the initial one', async (t) => {
  for (const disk of [0, 1] as const) {
    const shortest = getShortestPaths(diskMachine, traversal(disk))
    t.same(new Set(shortest.map((path) => stateName(path.state))), new Set(STATES), `shortest paths, Disk ${disk}`)
    const simple = getSimplePaths(diskMachine, traversal(disk))
    t.same(new Set(simple.map((path) => stateName(path.state))), new Set(STATES), `simple paths, Disk ${disk}`)
    const rw = shortest.find((path) => stateName(path.state) === 'rw')!
    t.same(
      steps(rw).map((step) => step.event.type),
      ['FORMATTED', 'UNLOCK_RW'],
      'rw is a format and an unlock away',
    )
    for (const path of simple) t.equal(path.state.context.disk, disk, 'the disk number never changes')
  }
})

t.test('every event from every state goes where the table says', async (t) => {
  const edges = adjacencyMapToArray(getAdjacencyMap(diskMachine, traversal(0)))
  const seen = new Set<string>()
  for (const { state, event, nextState } of edges) {
    const from = stateName(state)
    seen.add(`${from} ${event.type}`)
    t.equal(stateName(nextState), TABLE[from]![event.type], `${from} --${event.type}-->`)
  }
  t.equal(seen.size, STATES.length * EVENTS.length, 'all 20 state-event pairs walked')
  t.equal(edges.length, seen.size)
})

t.test('nothing but FORMATTED leaves unformatted; ERASED returns from anywhere', async (t) => {
  const edges = adjacencyMapToArray(getAdjacencyMap(diskMachine, traversal(1)))
  const leaving = edges.filter(
    ({ state, nextState }) => stateName(state) === 'unformatted' && stateName(nextState) !== 'unformatted',
  )
  t.same(
    leaving.map(({ event }) => event.type),
    ['FORMATTED'],
  )
  const erased = edges.filter(({ event }) => event.type === 'ERASED')
  t.equal(erased.length, STATES.length)
  t.ok(erased.every(({ nextState }) => stateName(nextState) === 'unformatted'))
})

t.test('the journal fold of every simple path ends where the path does', async (t) => {
  for (const path of getSimplePaths(diskMachine, traversal(1))) {
    let from = 'unformatted'
    const records = steps(path).flatMap(({ event, state }) => {
      const to = stateName(state)
      const record = { machine: 'disk', version: diskVersion, from, to, event: event.type }
      const changed = from !== to
      from = to
      return changed ? [record] : []
    })
    t.equal(stateName(replayTransitions(diskMachine, diskVersion, records, { disk: 1 })), stateName(path.state))
  }
})

t.test('bootMode: Disk 0 follows storage_mode bits 0-1, Disk 1 starts locked', async (t) => {
  const disk0: Record<number, string> = {
    0x50: 'locked',
    0x51: 'ro',
    0x53: 'rw',
    0xa0: 'locked',
    0xa1: 'ro',
    0xa3: 'rw',
    0x52: 'locked',
  }
  for (const [mode, state] of Object.entries(disk0)) {
    t.equal(bootMode(0, Number(mode)), state, `Disk 0 at 0x${Number(mode).toString(16)}`)
    t.equal(bootMode(1, Number(mode)), 'locked', `Disk 1 at 0x${Number(mode).toString(16)}`)
  }
  t.throws(() => bootMode(2 as never, 0x51), RangeError)
  t.throws(() => bootMode(0, 0x41), RangeError, 'storage_mode is checked for Disk 0 too')
})

t.test('disk1Cipher: the high nibble names the cipher', async (t) => {
  for (const mode of [0x50, 0x51, 0x53]) t.equal(disk1Cipher(mode), 'AES-CTR')
  for (const mode of [0xa0, 0xa1, 0xa3]) t.equal(disk1Cipher(mode), 'AES-XTS')
  for (const bad of [0x00, 0x01, 0x41, 0xf1, 0x100, -1, 81.5, Number.NaN, 0x55, 0x59, '0x51', null, undefined]) {
    t.throws(() => disk1Cipher(bad as never), RangeError, `storage_mode ${String(bad)}`)
  }
})
