// The brake's decisions (actors/auth/brake.ts) against a model of its rule, on every path of a
// client's outcomes up to a length: a refusal, a success, or quiet time around the 15 minutes
// that the brake remembers a client for. The model reads the rule off the history as written in
// docs/security.md: the floor is slowMs once the client's refusals since it was last let in, with
// no quiet gap over 15 minutes among them or since, reach the threshold; baseMs otherwise.
import t from 'tap'
import {
  type BrakeRules,
  brakeRules,
  floorOf,
  MEMORY_MS,
  recalled,
  refusedAt,
  type Standing,
} from '../actors/auth/brake.js'

type Step = 'refused' | 'succeeded' | 'quiet' | 'forgotten'
const STEPS: Step[] = ['refused', 'succeeded', 'quiet', 'forgotten']
/** Time each step moves on by: a refusal and a success take a moment; quiet time is the memory, or just over it. */
const ADVANCE: Record<Step, number> = { refused: 1, succeeded: 1, quiet: MEMORY_MS - 1, forgotten: MEMORY_MS + 1 }

type Event = { kind: 'refused' | 'succeeded'; at: number }

/** The model: refusals counted back from `now`, up to a success or a quiet gap of more than MEMORY_MS. */
function modelRefusals(history: Event[], now: number): number {
  let count = 0
  let later = now
  for (const event of [...history].reverse()) {
    if (later - event.at > MEMORY_MS || event.kind === 'succeeded') break
    count += 1
    later = event.at
  }
  return count
}

/** Every path of `depth` steps, each checked against the model after every step. */
function explore(rules: BrakeRules, depth: number, check: (ok: boolean, what: string) => void): number {
  let paths = 0
  const walk = (standing: Standing | undefined, history: Event[], now: number, path: Step[]) => {
    const refusals = modelRefusals(history, now)
    const remembered = recalled(standing, now)
    check(
      (remembered?.refusals ?? 0) === refusals &&
        floorOf(rules, remembered) === (refusals >= rules.threshold ? rules.slowMs : rules.baseMs),
      path.join(' → ') || 'a client never seen',
    )
    if (path.length === depth) return void paths++
    for (const step of STEPS) {
      const at = now + ADVANCE[step]
      if (step === 'refused') walk(refusedAt(standing, at), [...history, { kind: step, at }], at, [...path, step])
      else if (step === 'succeeded') walk(undefined, [...history, { kind: step, at }], at, [...path, step])
      else walk(standing, history, at, [...path, step])
    }
  }
  walk(undefined, [], 0, [])
  return paths
}

for (const options of [{}, { baseMs: 10, slowMs: 20, threshold: 1 }, { threshold: 4 }]) {
  t.test(`every path of 7 outcomes and quiet times follows the rule (${JSON.stringify(options)})`, async (t) => {
    const rules = brakeRules(options)
    const wrong: string[] = []
    const paths = explore(rules, 7, (ok, what) => void (ok || wrong.push(what)))
    t.equal(paths, STEPS.length ** 7)
    t.same(wrong.slice(0, 5), [], 'no path where the floor or the count departs from the model')
  })
}

t.test('the defaults: 500 ms, 1500 ms from the third refusal in a row on', async (t) => {
  t.same(brakeRules(), { baseMs: 500, slowMs: 1500, threshold: 3 })
  let standing: Standing | undefined
  const floors: number[] = []
  for (let i = 0; i < 5; i++) {
    floors.push(floorOf(brakeRules(), recalled(standing, i)))
    standing = refusedAt(standing, i)
  }
  t.same(floors, [500, 500, 500, 1500, 1500])
})
