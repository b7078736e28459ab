// The login queue's order and bounds (actors/auth/login-order.ts) on every queue of up to 6
// attempts from 3 clients, each client with 0 to 2 recent refusals: the next check and the fate
// of an arriving attempt, against a model of the rule (a client's key: fewest refusals, then
// fewest waiting, then the latest oldest attempt) and against what the rule is for: the owner
// (no refusal, nothing waiting) always gets a place and is checked next but for a client placed
// as well that asked later, and a client's own attempts go in order.
import t from 'tap'
import { arrival, fitsSource, nextTurn, type Queued } from '../actors/auth/login-order.js'

const CLIENTS = ['a', 'b', 'c']
const NEWCOMER = 'owner'

/** Every queue of up to `length` attempts, arrival order = queue order. */
function* queues(length: number): Generator<Queued[]> {
  yield []
  if (length === 0) return
  for (const shorter of queues(length - 1))
    for (const source of CLIENTS) yield [...shorter, { source, seq: shorter.length + 1 }]
}

function* refusalMaps(): Generator<Map<string, number>> {
  for (let n = 0; n < 3 ** CLIENTS.length; n++)
    yield new Map(CLIENTS.map((source, i) => [source, Math.floor(n / 3 ** i) % 3]))
}

/** The model's key of a client, with `arriving` its new attempt's order: the smaller the sooner. */
function key(waiting: Queued[], refusals: Map<string, number>, source: string, arriving?: number): number[] {
  const own = waiting.filter((attempt) => attempt.source === source).map((attempt) => attempt.seq)
  if (arriving !== undefined) own.push(arriving)
  return [refusals.get(source) ?? 0, own.length, -Math.min(...own)]
}

const less = (a: number[], b: number[]) => {
  const i = a.findIndex((value, j) => value !== b[j])
  return i >= 0 && a[i]! < b[i]!
}

function modelTurn(waiting: Queued[], refusals: Map<string, number>): Queued | undefined {
  const sources = [...new Set(waiting.map((attempt) => attempt.source))]
  const best = sources.sort((x, y) => (less(key(waiting, refusals, x), key(waiting, refusals, y)) ? -1 : 1))[0]
  return waiting.find((attempt) => attempt.source === best)
}

function modelArrival(waiting: Queued[], refusals: Map<string, number>, total: number, source: string) {
  if (waiting.length < total) return { enter: true }
  const sources = [...new Set(waiting.map((attempt) => attempt.source))]
  const worst = sources.sort((x, y) => (less(key(waiting, refusals, x), key(waiting, refusals, y)) ? 1 : -1))[0]
  const seq = waiting.length + 1
  if (
    worst === undefined ||
    worst === source ||
    !less(key(waiting, refusals, source, seq), key(waiting, refusals, worst))
  )
    return { enter: false }
  return { enter: true, bumped: waiting.findLast((attempt) => attempt.source === worst) }
}

t.test('the next check: on every queue, the model', async (t) => {
  let cases = 0
  const wrong: string[] = []
  for (const waiting of queues(6))
    for (const refusals of refusalMaps()) {
      cases++
      const turn = nextTurn(waiting, (source) => refusals.get(source) ?? 0)
      if (turn !== modelTurn(waiting, refusals)) wrong.push(`${JSON.stringify(waiting)} ${[...refusals.values()]}`)
      const first = waiting.find((attempt) => attempt.source === turn?.source)
      if (turn !== first) wrong.push(`not the client's oldest: ${JSON.stringify(waiting)}`)
    }
  t.equal(cases, 1093 * 27)
  t.same(wrong.slice(0, 5), [])
})

t.test("the owner's attempt, the latest to arrive, is checked next whatever waits", async (t) => {
  const wrong: string[] = []
  for (const queued of queues(6))
    for (const refusals of refusalMaps()) {
      const waiting = [...queued, { source: NEWCOMER, seq: queued.length + 1 }]
      const turn = nextTurn(waiting, (source) => refusals.get(source) ?? 0)
      if (turn?.source !== NEWCOMER) wrong.push(`${JSON.stringify(waiting)} ${[...refusals.values()]}`)
    }
  t.same(wrong.slice(0, 5), [])
})

t.test('an arriving attempt: on every queue, full or not, from each client and the owner, the model', async (t) => {
  const wrong: string[] = []
  let cases = 0
  for (const waiting of queues(6))
    for (const refusals of refusalMaps())
      for (const total of [waiting.length, waiting.length + 1])
        for (const source of [...CLIENTS, NEWCOMER]) {
          cases++
          const got = arrival(waiting, total, source, waiting.length + 1, (s) => refusals.get(s) ?? 0)
          const model = modelArrival(waiting, refusals, total, source)
          const what = `${source} → ${JSON.stringify(waiting)} of ${total}, refusals ${[...refusals.values()]}`
          if (JSON.stringify(got) !== JSON.stringify(model)) wrong.push(what)
          if (source === NEWCOMER && waiting.length > 0 && !got.enter) wrong.push(`the owner refused: ${what}`)
          if ('bumped' in got && got.bumped.source === source) wrong.push(`its own place taken: ${what}`)
          if ('bumped' in got && waiting.length < total) wrong.push(`a place taken from a queue not full: ${what}`)
        }
  t.equal(cases, 1093 * 27 * 2 * 4)
  t.same(wrong.slice(0, 5), [])
})

t.test('per client: up to `perSource` in flight', async (t) => {
  t.same(
    [0, 7, 8, 9].map((inFlight) => fitsSource(inFlight, 8)),
    [true, true, false, false],
  )
})
