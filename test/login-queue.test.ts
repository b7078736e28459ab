// The login queue on its own: bounds, fairness between clients, and attempts nobody awaits any more.
import { hostClock } from '../hal/sim/host-clock.js'
import t from 'tap'
import { LoginBrake } from '../actors/auth/brake.js'
import { LoginQueue, type LoginQueueOptions } from '../actors/auth/login-queue.js'
import type { CommandReply } from '../protocol/bus-messages.js'

/** A queue whose brake waits nothing: the order and the refusals are what is checked. */
function queue(options: Partial<LoginQueueOptions> = {}) {
  let now = 1_000_000
  const q = new LoginQueue({
    clock: { monotonic: () => 0, sleep: hostClock.sleep },
    brake: new LoginBrake({ baseMs: 0, slowMs: 0 }),
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

t.test('the client served least recently goes next, however many another has queued', async (t) => {
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

t.test('bounds: per client and in all, refused at once with 429 and Retry-After, never examined', async (t) => {
  const { q } = queue({ perSource: 3, total: 4 })
  const log: string[] = []
  const a = [1, 2, 3].map((i) => gated(log, `a${i}`))
  const [a1, a2, a3] = a.map((g) => q.run('10.0.0.1', undefined, g.attempt)) as [
    Promise<CommandReply>,
    Promise<CommandReply>,
    Promise<CommandReply>,
  ]
  await settle()
  const over = await q.run('10.0.0.1', undefined, gated(log, 'a4').attempt)
  t.equal(over.status, 429, "a client's fourth")
  t.match(over.body, { error: 'too_many_requests' })
  t.ok(Number.isInteger(over.retryAfter) && over.retryAfter! >= 1, `Retry-After ${over.retryAfter}`)

  // Two of a's wait; b, c and d fill the queue; e finds it full of clients with one each.
  const others = ['b', 'c'].map((name) => gated(log, name))
  const otherAnswers = others.map((g, i) => q.run(`10.0.1.${i}`, undefined, g.attempt))
  t.equal(q.waiting, 4)
  // A client with none yet takes the newest place of the busiest (a, with two waiting).
  const d = gated(log, 'd')
  const dAnswer = q.run('10.0.2.1', undefined, d.attempt)
  t.equal((await a3).status, 429, "a's newest gave way")
  t.equal(q.waiting, 4)
  const e = await q.run('10.0.3.1', undefined, gated(log, 'e').attempt)
  t.equal(e.status, 429, 'full of clients with one each: refused')
  for (const g of [...a, ...others, d]) g.release()
  await Promise.all([a1, a2, ...otherAnswers, dAnswer])
  t.same(log, ['a1', 'b', 'c', 'd', 'a2'], 'no refused attempt ran')
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
    brake: new LoginBrake({ baseMs: 50, slowMs: 50 }),
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
