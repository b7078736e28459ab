// What the login queue remembers of each client: its refusals in a row (the floor of its answers)
// and its recent refusals (its place), nothing of any other client, bounded in time and in clients.
import t from 'tap'
import { LoginSources } from '../actors/auth/login-sources.js'

const MINUTE = 60_000

t.test("a client's floor: 500 ms, 1500 ms after its 3 refusals in a row; a success forgets it", async (t) => {
  const sources = new LoginSources()
  const floors: number[] = []
  for (let i = 0; i < 4; i++) {
    floors.push(sources.floor('10.0.0.1', 0))
    sources.refused('10.0.0.1', 0)
  }
  t.same(floors, [500, 500, 500, 1500])
  t.equal(sources.floor('10.0.0.2', 0), 500, "another client's is its own")
  t.equal(sources.refusals('10.0.0.1', 0), 4)
  sources.succeeded('10.0.0.1')
  t.equal(sources.floor('10.0.0.1', 0), 500)
  t.equal(sources.refusals('10.0.0.1', 0), 0)
})

t.test('refusals are remembered 15 minutes after the last one', async (t) => {
  const sources = new LoginSources()
  for (let i = 0; i < 3; i++) sources.refused('10.0.0.1', i * 10 * MINUTE)
  t.equal(sources.refusals('10.0.0.1', 35 * MINUTE), 3, '15 minutes after the last: still')
  t.equal(sources.floor('10.0.0.1', 35 * MINUTE), 1500)
  t.equal(sources.refusals('10.0.0.1', 35 * MINUTE + 1), 0, 'then forgotten')
  t.equal(sources.floor('10.0.0.1', 35 * MINUTE + 1), 500)
  sources.refused('10.0.0.1', 36 * MINUTE)
  t.equal(sources.refusals('10.0.0.1', 36 * MINUTE), 1, 'counted afresh')
})

t.test('bounded: beyond its capacity, the client refused least recently is forgotten', async (t) => {
  const sources = new LoginSources({ capacity: 3 })
  for (const source of ['a', 'b', 'c']) sources.refused(source, 0)
  sources.refused('a', 1)
  sources.refused('d', 2)
  t.same(
    ['a', 'b', 'c', 'd'].map((source) => sources.refusals(source, 3)),
    [2, 0, 1, 1],
    'b, refused least recently, went first',
  )
})
