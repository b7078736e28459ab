import t from 'tap'
import { LoginBrake } from '../actors/auth/brake.js'

// Each step: the minimum the attempt's answer takes, then its outcome.
function run(brake: LoginBrake, outcomes: boolean[]): number[] {
  return outcomes.map((ok) => {
    const minimum = brake.minimumDuration()
    brake.record(ok)
    return minimum
  })
}

t.test('500 ms always, 1500 ms once three failures in a row were recorded', async (t) => {
  const F = false
  const S = true
  t.same(run(new LoginBrake(), [F, F, F, F, F]), [500, 500, 500, 1500, 1500])
  t.same(run(new LoginBrake(), [S, S, S]), [500, 500, 500])
  t.same(run(new LoginBrake(), [F, F, S, F, F, F]), [500, 500, 500, 500, 500, 500], 'a success between resets the run')
})

t.test('a success resets the count', async (t) => {
  const brake = new LoginBrake()
  t.same(run(brake, [false, false, false, true]), [500, 500, 500, 1500], 'the success itself still waited')
  t.equal(brake.minimumDuration(), 500)
  t.same(run(brake, [false, false, false, false]), [500, 500, 500, 1500])
})

t.test('tunable', async (t) => {
  t.same(run(new LoginBrake({ baseMs: 10, slowMs: 20, threshold: 1 }), [false, false, true, true]), [10, 20, 20, 10])
})
