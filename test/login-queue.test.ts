// The login queue on its own: the order of checks between clients, the bounds, the floors of the
// answers and the pace of checks, and attempts nobody awaits any more.
import { hostClock } from '../hal/sim/host-clock.js'
import t from 'tap'
import { LoginQueue, type LoginQueueOptions } from '../actors/auth/login-queue.js'
import type { CommandReply } from '../protocol/bus-messages.js'
import { simulatedClock } from './helpers/clock.js'

/** A queue whose brake waits nothing: the order and the refusals are what is checked. */
function queue(options: Partial<LoginQueueOptions> = {}) {
  let now = 1_000_000
  const q = new LoginQueue({
    clock: { monotonic: () => 0, sleep: hostClock.sleep },
    brake: { baseMs: 0, slowMs: 0 },
    now: () => now,
    ...options,
  })
  return { q, advance: (ms: number) => void (now += ms), now: () => now }
}

/** An attempt that runs when the test says, noting its name when it starts. */
function gated(log: string[], name: string) {
  let open!: (reply: CommandReply) => void
  const reply = new Promise<CommandReply>((resolve) => (open = resolve))
  return {
    attempt: () => (log.push(name), reply),
    release: (status = 401) => open({ status }),
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5))

/** An attempt of `source` that its screen refuses: a refusal on the client's record, and no check. */
const refuse = (q: LoginQueue, source: string) =>
  q.run(
    source,
    undefined,
    async () => ({ status: 500 }),
    async () => ({ status: 401 }),
  )

t.test('the client with the fewest refusals goes next, however many another has queued', async (t) => {
  const { q } = queue()
  const log: string[] = []
  const a = [1, 2, 3, 4].map((i) => gated(log, `a${i}`))
  const answers = a.map((g) => q.run('10.0.0.1', undefined, g.attempt))
  await settle()
  const b = gated(log, 'b1')
  const bAnswer = q.run('10.0.0.2', undefined, b.attempt)
  for (const g of a) g.release()
  b.release(200)
  t.equal((await bAnswer).status, 200)
  await Promise.all(answers)
  t.same(log, ['a1', 'b1', 'a2', 'a3', 'a4'], "b's attempt waits for one of a's, not for all four")
})

t.test('placed by fewest recent refusals, then fewest waiting, then the client that asked last', async (t) => {
  const { q } = queue()
  await refuse(q, '10.0.0.1')
  await refuse(q, '10.0.0.1')
  const log: string[] = []
  const first = gated(log, 'first')
  const running = q.run('10.0.9.9', undefined, first.attempt)
  await settle()
  const waiting = [
    ['a', '10.0.0.1'],
    ['b1', '10.0.0.2'],
    ['b2', '10.0.0.2'],
    ['c', '10.0.0.3'],
    ['d', '10.0.0.4'],
  ].map(([name, source]) => {
    const g = gated(log, name!)
    return { g, answer: q.run(source!, undefined, g.attempt) }
  })
  await settle()
  t.equal(q.waiting, 5)
  first.release()
  for (const { g } of waiting) g.release()
  await Promise.all([running, ...waiting.map((w) => w.answer)])
  // d and c: none refused, one waiting, d asked last; b: two waiting, then one refused; a: two refused.
  t.same(log, ['first', 'd', 'c', 'b1', 'b2', 'a'])
})

t.test('bounds: per client and in all, refused with 429 and Retry-After, never examined', async (t) => {
  const { q } = queue({ perSource: 2, total: 2 })
  const log: string[] = []
  const first = gated(log, 'first')
  const running = q.run('10.0.9.9', undefined, first.attempt)
  const [x1, x2] = ['x1', 'x2'].map((name) => q.run('10.0.0.9', undefined, gated(log, name).attempt))
  await settle()
  t.equal(q.waiting, 2, 'full')
  const over = await q.run('10.0.0.9', undefined, gated(log, 'x3').attempt)
  t.equal(over.status, 429, 'its third in flight, of two allowed')
  t.match(over.body, { error: 'too_many_requests' })
  t.ok(Number.isInteger(over.retryAfter) && over.retryAfter! >= 1, `Retry-After ${over.retryAfter}`)

  const k = q.run('10.0.0.2', undefined, gated(log, 'k').attempt)
  t.equal((await x2!).status, 429, "a client placed better takes the worst placed one's newest place")
  for (let i = 0; i < 3; i++) await refuse(q, '10.0.0.1')
  const j = await q.run('10.0.0.1', undefined, gated(log, 'j').attempt)
  t.equal(j.status, 429, 'a client placed no better than any finds no place')
  const n = gated(log, 'n')
  const nAnswer = q.run('10.0.0.4', undefined, n.attempt)
  t.equal((await x1!).status, 429)
  const p = gated(log, 'p')
  const pAnswer = q.run('10.0.0.5', undefined, p.attempt)
  t.equal((await k).status, 429, "among equals, the one that asked first gives way: it may be a wave's")
  t.equal(q.waiting, 2)
  first.release()
  n.release()
  p.release()
  await Promise.all([running, nAnswer, pAnswer])
  t.same(log, ['first', 'p', 'n'], 'no refused attempt ran; the one that asked last first')
})

t.test('an attempt whose deadline passed while it waited is dropped unread', async (t) => {
  const { q, advance, now } = queue()
  const log: string[] = []
  const first = gated(log, 'first')
  const running = q.run('10.0.0.1', undefined, first.attempt)
  await settle()
  const late = q.run('10.0.0.2', now() + 100, gated(log, 'late').attempt)
  const onTime = gated(log, 'on time')
  const onTimeAnswer = q.run('10.0.0.3', now() + 10_000, onTime.attempt)
  advance(200)
  first.release()
  await running
  const dropped = await late
  t.equal(dropped.status, 504)
  t.match(dropped.body, { error: 'timeout' })
  onTime.release(200)
  t.equal((await onTimeAnswer).status, 200)
  t.same(log, ['first', 'on time'], 'the late attempt never ran')
})

t.test('attempts run one at a time, whatever their client', async (t) => {
  let clock = 0
  const q = new LoginQueue({
    clock: { monotonic: () => clock, sleep: hostClock.sleep },
    brake: { baseMs: 50, slowMs: 50 },
  })
  let active = 0
  let most = 0
  const attempt = async () => {
    most = Math.max(most, ++active)
    await settle()
    clock += 60
    active -= 1
    return { status: 401 }
  }
  const answers = await Promise.all([1, 2, 3].map((i) => q.run(`10.0.0.${i}`, undefined, attempt)))
  t.same(
    answers.map((a) => a.status),
    [401, 401, 401],
  )
  t.equal(most, 1, 'never two at once')
})

t.test('closing answers what waits, and what comes, 503 at once; the running attempt finishes', async (t) => {
  const { q } = queue()
  const log: string[] = []
  const first = gated(log, 'first')
  const running = q.run('10.0.0.1', undefined, first.attempt)
  await settle()
  const waiting = [
    q.run('10.0.0.1', undefined, gated(log, 'a').attempt),
    q.run('10.0.0.2', undefined, gated(log, 'b').attempt),
  ]
  await settle()
  q.close()
  t.same(
    (await Promise.all(waiting)).map((a) => a.status),
    [503, 503],
  )
  t.equal((await q.run('10.0.0.3', undefined, gated(log, 'c').attempt)).status, 503, 'and after')
  first.release(200)
  t.equal((await running).status, 200)
  t.same(log, ['first'])
})

/** Runs `asks` on a queue with the device's numbers on a simulated clock; each answer's ms from its request. */
async function timed(asks: (q: LoginQueue, clock: ReturnType<typeof simulatedClock>) => Promise<unknown>) {
  const clock = simulatedClock()
  const q = new LoginQueue({ clock, now: clock.now })
  const done = asks(q, clock)
  await clock.run(60_000)
  await done
}

t.test("every answer is held to its own client's floor from its arrival, side by side", async (t) => {
  await timed(async (q, clock) => {
    const ask = async (source: string, status: number, screened: boolean) => {
      const sent = clock.monotonic()
      const answer = { status }
      const reply = screened
        ? await q.run(
            source,
            undefined,
            async () => (t.fail('no check'), answer),
            async () => answer,
          )
        : await q.run(source, undefined, async () => answer)
      return { status: reply.status, ms: clock.monotonic() - sent }
    }
    // Ten clients at once, refused unchecked: every answer at 500 ms, none waits for another's.
    const ten = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(`10.0.0.${i}`, 400, true)))
    t.same(
      ten.map((a) => a.ms),
      Array(10).fill(501),
    )
    // One of them, refused twice more in a row, has its answers held 1.5 s; the others' are not.
    for (let i = 0; i < 2; i++) t.equal((await ask('10.0.0.1', 401, false)).ms, 501)
    t.equal((await ask('10.0.0.1', 401, false)).ms, 1501, 'after its 3 refusals in a row: 1500 ms')
    t.equal((await ask('10.0.0.2', 200, false)).ms, 501, "another client's: 500 ms")
    t.equal((await ask('10.0.0.1', 200, false)).ms, 1501, 'its success, still after 1500 ms')
    t.equal((await ask('10.0.0.1', 401, false)).ms, 501, 'which forgot its refusals')
  })
})

t.test('checks, one client or many: 500 ms apart, 3 + t / 1.5 s in any t s, whatever their outcome', async (t) => {
  for (const sources of [1, 8]) {
    await timed(async (q, clock) => {
      const checks: number[] = []
      const check = async () => (checks.push(clock.monotonic()), { status: checks.length === 4 ? 200 : 401 })
      await Promise.all(Array.from({ length: 8 }, (_, i) => q.run(`10.0.0.${i % sources}`, undefined, check)))
      // As the brake let one client's attempts through when the device examined one at a time.
      t.same(checks, [0, 500, 1000, 1500, 3000, 4500, 6000, 7500], `${sources} client(s)`)
    })
  }
  await timed(async (q, clock) => {
    const checks: number[] = []
    const check = async () => (checks.push(clock.monotonic()), { status: 401 })
    // Refused by the screen: no guess tested, no place of the pace taken.
    const screened = Array.from({ length: 20 }, (_, i) =>
      q.run(`10.0.1.${i}`, undefined, check, async () => ({ status: 400 })),
    )
    await Promise.all(screened)
    await q.run('10.0.0.1', undefined, check)
    t.same(checks, [501], 'after 20 screened refusals, a check at once')
  })
})
