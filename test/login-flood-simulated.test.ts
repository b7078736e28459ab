// The owner gets in during a login flood from many addresses, and guessing from many addresses
// gains nothing (issue 35 item 2): the login queue on a simulated clock, with the device's own
// numbers (floors 500 and 1500 ms, checks at the brake's pace, 30 s deadlines), so that each
// figure is the queue's alone, exact on any host.
import t from 'tap'
import { LoginQueue } from '../actors/auth/login-queue.js'
import { DEADLINE_MS } from '../protocol/deadlines.js'
import { simulatedClock } from './helpers/clock.js'

const OWNER = '192.0.2.1'
const SECOND = 1000
/** From a junk client's answer to its next request. */
const ROUND_TRIP_MS = 20

interface Flood {
  addresses: number
  /** Each address's connections, each sending its next wrong guess a round trip after its answer. */
  connections: number
  /**
   * When the owner tries, in ms from the first junk, one try at a time: each just after the next
   * check of a junk guess from then on, when the next place of the pace is furthest.
   */
  tries: number[]
  /** Whether the owner's check lets it in (its passphrase is right); default true. */
  right?: boolean
  /** How long the flood goes on after the last try's answer; default none. */
  after?: number
}

interface Outcome {
  /** The owner's answers: status and ms from its request. */
  owner: { status: number; ms: number }[]
  /** When each failed check ran. */
  failedChecks: number[]
  /** Every junk answer, in order: client, ms, status. */
  junk: string[]
}

/** Runs a flood to its end on a simulated clock; no answer of the owner's is taken later than the gateway's 30 s. */
async function flood(f: Flood): Promise<Outcome> {
  const clock = simulatedClock()
  const queue = new LoginQueue({ clock, now: clock.now })
  const failedChecks: number[] = []
  const junk: string[] = []
  let flooding = true
  const ask = async (source: string, right: boolean) => {
    const sent = clock.monotonic()
    const check = async () => {
      if (!right) failedChecks.push(clock.monotonic())
      return { status: right ? 200 : 401 }
    }
    const reply = await queue.run(source, clock.now() + DEADLINE_MS.medium, check)
    return { status: reply.status, ms: clock.monotonic() - sent }
  }
  const connections: Promise<void>[] = []
  for (let address = 0; address < f.addresses; address++)
    for (let connection = 0; connection < f.connections; connection++) {
      const source = `10.0.${address >> 8}.${address & 255}`
      connections.push(
        (async () => {
          while (flooding) {
            const { status } = await ask(source, false)
            junk.push(`${source} ${clock.monotonic()} ${status}`)
            await clock.sleep(ROUND_TRIP_MS)
          }
        })(),
      )
    }
  const owner: Outcome['owner'] = []
  for (const at of f.tries) {
    await clock.run(Math.max(0, at - clock.monotonic()))
    for (const checked = failedChecks.length; failedChecks.length === checked;) await clock.run(1)
    let answer: { status: number; ms: number } | undefined
    void ask(OWNER, f.right ?? true).then((a) => (answer = a))
    // The gateway answers 504 after 30 s: the owner's try ends then at the latest.
    for (let waited = 0; !answer && waited <= DEADLINE_MS.medium; waited += 100) await clock.run(100)
    owner.push(answer ?? { status: 504, ms: DEADLINE_MS.medium })
  }
  await clock.run(f.after ?? 0)
  flooding = false
  queue.close()
  await clock.run(2 * SECOND)
  await Promise.all(connections)
  return { owner, failedChecks, junk }
}

/** Failed checks that ran within [from, to) ms. */
const within = (checks: number[], from: number, to: number) => checks.filter((at) => at >= from && at < to).length

const tries = [10, 16, 22, 28, 34].map((s) => s * SECOND)

t.test('64 addresses × 4 connections of wrong guesses: each of 5 owner logins answered 200 within 2 s', async (t) => {
  const { owner } = await flood({ addresses: 64, connections: 4, tries })
  t.equal(owner.length, 5)
  for (const [i, { status, ms }] of owner.entries()) {
    t.equal(status, 200, `try ${i + 1}: let in`)
    t.ok(ms <= 2 * SECOND, `try ${i + 1}: within 2 s (${ms} ms)`)
    t.ok(ms >= 500, `try ${i + 1}: no sooner than the floor (${ms} ms)`)
  }
})

t.test('256 addresses: each of 5 owner logins within 5 s, the first amid their first junk', async (t) => {
  // The first try comes amid the addresses' first guesses, before most of them were refused.
  const { owner } = await flood({ addresses: 256, connections: 1, tries: [0, ...tries] })
  t.equal(owner.length, 6)
  for (const [i, { status, ms }] of owner.entries()) {
    t.equal(status, 200, `try ${i + 1}: let in`)
    t.ok(ms <= 5 * SECOND, `try ${i + 1}: within 5 s (${ms} ms)`)
  }
})

t.test('failed checks per second, all addresses together: no more from 256 addresses than from one', async (t) => {
  const window = { from: 10 * SECOND, to: 70 * SECOND }
  const rate = async (addresses: number, connections: number) => {
    const { failedChecks } = await flood({ addresses, connections, tries: [], after: window.to })
    return within(failedChecks, window.from, window.to)
  }
  const one = await rate(1, 8)
  const many = await rate(256, 2)
  const seconds = (window.to - window.from) / SECOND
  // The pace: one check per 1.5 s once its three quick ones are spent (and one may straddle the window).
  t.ok(one <= seconds / 1.5 + 1, `one address, 8 connections: ${one} in ${seconds} s`)
  t.ok(many <= one, `256 addresses × 2: ${many} in ${seconds} s, not more than from one`)
  t.ok(many >= seconds / 1.5 - 1, `the pace is kept, not starved (${many})`)
  const { failedChecks } = await flood({ addresses: 256, connections: 2, tries: [], after: window.to })
  // The first seconds too: three checks 500 ms apart, then one per 1.5 s, whatever the addresses.
  t.ok(within(failedChecks, 0, 3 * SECOND) <= 4, `the first 3 s: ${within(failedChecks, 0, 3 * SECOND)}`)
  t.ok(within(failedChecks, 0, 6 * SECOND) <= 6, `the first 6 s: ${within(failedChecks, 0, 6 * SECOND)}`)
})

t.test("answers and their times are the same whether another client's guess was right or wrong", async (t) => {
  // One client (the "owner") guesses once amid the flood; everything the others see is compared.
  const scenario = { addresses: 64, connections: 4, tries: [12 * SECOND], after: 20 * SECOND }
  const right = await flood({ ...scenario, right: true })
  const wrong = await flood({ ...scenario, right: false })
  t.equal(right.owner[0]!.status, 200)
  t.equal(wrong.owner[0]!.status, 401)
  t.equal(right.owner[0]!.ms, wrong.owner[0]!.ms, `its own answer came at the same time (${right.owner[0]!.ms} ms)`)
  t.ok(right.junk.length > 1000, `${right.junk.length} answers to the others`)
  t.same(right.junk, wrong.junk, 'every other answer: the same client, time and status')
})
