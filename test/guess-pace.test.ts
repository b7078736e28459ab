// The device's pace of checks (actors/auth/guess-pace.ts) against a model of its rule, on every
// path of arrivals up to a length: each check starts at the earliest time at or after its arrival
// where it is `baseMs` after the last one and no window of the checks so far, with it, holds more
// than `threshold` + t / `slowMs` of them. The model asks those two things of the start times
// themselves; the code keeps a bucket.
import t from 'tap'
import { type BrakeRules, brakeRules } from '../actors/auth/brake.js'
import { freshPace, type Pace, paceTake, paceWait, retryAfterSeconds } from '../actors/auth/guess-pace.js'

/** The earliest start at or after `now` that the rule allows after `starts`. */
function modelStart(rules: BrakeRules, starts: number[], now: number): number {
  let earliest = Math.max(now, (starts.at(-1) ?? -Infinity) + rules.baseMs)
  // From the i-th start on, with this one: starts.length - i + 1 checks in (start - starts[i]) ms.
  starts.forEach((at, i) => {
    earliest = Math.max(earliest, at + (starts.length - i + 1 - rules.threshold) * rules.slowMs)
  })
  return earliest
}

/** Every path of `depth` arrivals, each `gaps` apart from the previous start, checked against the model. */
function explore(rules: BrakeRules, gaps: number[], depth: number): { paths: number; wrong: string[] } {
  let paths = 0
  const wrong: string[] = []
  const walk = (pace: Pace, starts: number[]) => {
    if (starts.length === depth) return void paths++
    for (const gap of gaps) {
      const now = (starts.at(-1) ?? 0) + gap
      const start = now + paceWait(rules, pace, now)
      const model = modelStart(rules, starts, now)
      if (start !== model && wrong.length < 5) wrong.push(`${[...starts, now].join(', ')}: ${start}, not ${model}`)
      walk(paceTake(rules, pace, start), [...starts, start])
    }
  }
  walk(freshPace(rules), [])
  return { paths, wrong }
}

t.test('every path of 7 arrivals starts each check when the rule says, the defaults', async (t) => {
  const { paths, wrong } = explore(brakeRules(), [0, 1, 499, 500, 1000, 1499, 1500, 4500], 7)
  t.equal(paths, 8 ** 7)
  t.same(wrong, [], 'no check earlier or later than the model')
})

t.test('every path of 7 arrivals, on small numbers, each gap of 0 to 9 ms', async (t) => {
  const rules = brakeRules({ baseMs: 2, slowMs: 5, threshold: 2 })
  const { paths, wrong } = explore(rules, [0, 1, 2, 3, 4, 5, 6, 9], 7)
  t.equal(paths, 8 ** 7)
  t.same(wrong, [])
})

t.test('the figures: checks at 0, 0.5, 1, 1.5, 3, 4.5 s for attempts all there at once', async (t) => {
  const rules = brakeRules()
  let pace = freshPace(rules)
  const starts: number[] = []
  for (let i = 0; i < 6; i++) {
    const start = (starts.at(-1) ?? 0) + paceWait(rules, pace, starts.at(-1) ?? 0)
    pace = paceTake(rules, pace, start)
    starts.push(start)
  }
  t.same(starts, [0, 500, 1000, 1500, 3000, 4500])
  t.same(
    [0, 1, 2, 3].map((pending) => retryAfterSeconds(rules, pending)),
    [1, 2, 3, 5],
    'Retry-After: 1.5 s each',
  )
})
