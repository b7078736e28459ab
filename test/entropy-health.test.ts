// SP 800-90B §4.4 continuous health tests, and the HAL source that runs them on every byte.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { EntropyError } from '../hal/errors.js'
import { EntropyHealthError, HealthTestedEntropy } from '../hal/health-tested-entropy.js'
import {
  adaptiveProportionCutoff,
  ContinuousHealthTests,
  DEVICE_HEALTH_TESTS,
  repetitionCountCutoff,
} from '../hal/sp800-90b.js'
import { nodeEntropy } from '../hal/sim/node-entropy.js'
import type { EntropySource } from '../hal/types.js'

const host: EntropySource = { read: (n) => new Uint8Array(randomBytes(n)) }

t.test('cutoffs: SP 800-90B Table 2 (W = 512, α = 2^-20) and the §4.4.1 formula', async (t) => {
  for (const [minEntropy, cutoff] of [
    [0.5, 410],
    [1, 311],
    [2, 177],
    [4, 62],
    [8, 13],
  ] as const) {
    t.equal(adaptiveProportionCutoff({ minEntropy, alphaExponent: 20, window: 512 }), cutoff, `APT H=${minEntropy}`)
  }
  t.equal(repetitionCountCutoff({ minEntropy: 2, alphaExponent: 20, window: 512 }), 11, 'RCT H=2: 1 + 20/2')
  t.equal(repetitionCountCutoff(DEVICE_HEALTH_TESTS), 41, 'the device: H = 1, α = 2^-40')
  t.equal(adaptiveProportionCutoff(DEVICE_HEALTH_TESTS), 336)
  for (const bad of [
    { minEntropy: 0 },
    { minEntropy: 9 },
    { alphaExponent: 19 },
    { alphaExponent: 41 },
    { alphaExponent: 20.5 },
    { window: 1 },
  ]) {
    t.throws(() => repetitionCountCutoff({ ...DEVICE_HEALTH_TESTS, ...bad }), RangeError, JSON.stringify(bad))
    t.throws(() => adaptiveProportionCutoff({ ...DEVICE_HEALTH_TESTS, ...bad }), RangeError, JSON.stringify(bad))
  }
})

t.test('the repetition count test fails at exactly C equal samples in a row', async (t) => {
  const tests = new ContinuousHealthTests()
  t.equal(tests.push(Uint8Array.of(1, ...new Array(39).fill(7), 2)), undefined, '39 in a row pass')
  t.equal(tests.push(new Uint8Array(40).fill(9)), undefined, '40 in a row pass')
  t.equal(tests.push(Uint8Array.of(9)), 'repetition_count', 'the 41st fails')
  const across = new ContinuousHealthTests()
  t.equal(across.push(new Uint8Array(30).fill(3)), undefined)
  t.equal(across.push(new Uint8Array(11).fill(3)), 'repetition_count', 'runs are counted across reads')
})

t.test("the adaptive proportion test fails when the window's first value recurs C times in 512", async (t) => {
  const window = (zeros: number) => {
    // zeros spread so that no run reaches the repetition count cutoff
    const bytes = new Uint8Array(512)
    let left = zeros - 1
    for (let i = 1; i < 512; i++) bytes[i] = left > 0 && i % 3 !== 0 ? (left--, 0) : 1 + (i % 200)
    return bytes
  }
  t.equal(new ContinuousHealthTests().push(window(335)), undefined, '335 of 512 pass')
  t.equal(new ContinuousHealthTests().push(window(336)), 'adaptive_proportion', '336 fail')
  const tests = new ContinuousHealthTests()
  t.equal(tests.push(Uint8Array.of(5, ...window(335).subarray(1))), undefined)
  t.equal(tests.push(window(335)), undefined, 'each window counts afresh')
})

t.test(
  'every byte handed out comes from a whole window that passed: a stuck source fails even a 16-byte first read',
  async (t) => {
    let calls: number[] = []
    const stuck = new HealthTestedEntropy({ read: (n) => (calls.push(n), new Uint8Array(n).fill(1)) })
    t.throws(() => stuck.read(16), EntropyHealthError)
    t.same(calls, [512], 'one window drawn and tested')
    calls = []
    const sound = new HealthTestedEntropy({ read: (n) => (calls.push(n), host.read(n)) })
    for (const n of [16, 16, 600, 1]) t.equal(sound.read(n).length, n)
    t.same(calls, [512, 512], 'windows drawn as needed, the rest kept for later reads')
  },
)

t.test('a sound source passes megabytes; stuck and biased ones fail at once, and the failure latches', async (t) => {
  const sound = new HealthTestedEntropy(host)
  for (let i = 0; i < 64; i++) sound.read(65_536)
  t.equal(sound.failure, undefined, '4 MiB of the host source pass')
  t.equal(sound.startup(), undefined, 'the start-up test passes')

  let broken = false
  const flaky = new HealthTestedEntropy({ read: (n) => (broken ? new Uint8Array(n).fill(0x33) : host.read(n)) })
  broken = true
  const thrown = t.throws(() => flaky.read(64), EntropyHealthError) as unknown as EntropyHealthError
  t.ok(thrown instanceof EntropyError, 'an EntropyError, as the HAL promises')
  t.same(flaky.failure, { test: 'repetition_count' })
  broken = false
  t.throws(() => flaky.read(16), EntropyHealthError, 'latched: the repaired source is not trusted')
  t.equal(flaky.startup(), undefined, 'until the next start-up test, which passes')
  t.equal(flaky.read(16).length, 16)
  broken = true
  t.same(flaky.startup(), { test: 'repetition_count' }, 'a start-up test over a stuck source fails')

  let position = 0
  const biased = new HealthTestedEntropy({
    read: (n) => host.read(n).map((b) => (position++ % 5 === 0 ? b : 0)),
  })
  t.throws(() => {
    for (let i = 0; i < 8; i++) biased.read(512)
  }, EntropyHealthError)
  t.same(biased.failure, { test: 'adaptive_proportion' }, 'four zeros in five: the proportion test')

  const failing = new HealthTestedEntropy({
    read: () => {
      throw new Error('device gone')
    },
  })
  t.throws(() => failing.read(8), EntropyHealthError)
  t.same(failing.failure, { test: 'source' }, 'a source that cannot deliver has failed too')
  for (const n of [0, -1, 1.5, 65_537])
    t.throws(
      () => new HealthTestedEntropy(nodeEntropy).read(n),
      RangeError,
      `a bad size (${n}) is the caller's error, not the source's`,
    )
  t.equal(new HealthTestedEntropy(nodeEntropy).read(65_536).length, 65_536)
})

t.test('a forced failure (break_trng) gives the stuck byte without drawing from the noise source', async (t) => {
  let calls = 0
  const entropy = new HealthTestedEntropy({ read: (n) => (calls++, host.read(n)) })
  t.equal(entropy.raw.read(8).length, 8)
  t.equal(calls, 1)
  entropy.raw.forceFailure()
  t.same([...new Set(entropy.raw.read(41))], [0xa5], 'every byte the same')
  t.equal(entropy.raw.lastByte, 0xa5)
  t.equal(calls, 1, 'the source was not read for bytes thrown away')
  t.throws(() => entropy.read(16), EntropyHealthError)
  t.same(entropy.failure, { test: 'repetition_count' }, 'the health tests catch it')
  t.equal(entropy.startup(), undefined, 'a power-up clears it')
  t.equal(calls, 2, 'and reads the source again')
})
