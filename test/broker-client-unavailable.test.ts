// The client's broker calls through a cloud that lost its state store's quorum: a 503 `unavailable` (nothing
// applied) is asked again after its Retry-After, a bounded number of times; any other refusal, a 503 `timeout`
// included (the request may have been applied), fails at once.
import t from 'tap'
import { BrokerClient, BrokerRefusedError } from '../client/index.js'

const EPK = Buffer.alloc(32, 7).toString('base64')

/** A fetch answering from `answers` in turn, recording each request's method and path. */
function scripted(answers: { status: number; body: unknown; retryAfter?: string }[]) {
  const seen: string[] = []
  const fetch = (async (input: URL | RequestInfo, init?: RequestInit) => {
    seen.push(`${init?.method} ${new URL(String(input)).pathname}`)
    const next = answers.shift()
    if (!next) throw new Error('no answer left')
    const headers = next.retryAfter === undefined ? undefined : { 'Retry-After': next.retryAfter }
    return new Response(JSON.stringify(next.body), { status: next.status, ...(headers ? { headers } : {}) })
  }) as typeof globalThis.fetch
  return { fetch, seen }
}

const unavailable = { status: 503, body: { error: 'unavailable', message: 'try again' }, retryAfter: '1' }
const session = { status: 200, body: { epk: EPK, exp: 2_000_000_000 } }

t.test('a 503 unavailable is asked again after its Retry-After, until it answers', async (t) => {
  const { fetch, seen } = scripted([unavailable, { ...unavailable, retryAfter: '3' }, session])
  const waits: number[] = []
  const broker = new BrokerClient({ url: 'http://cloud.test', fetch, sleep: async (ms) => void waits.push(ms) })
  t.same(await broker.anonymousSession(), { epk: EPK, exp: 2_000_000_000 })
  t.same(seen, ['GET /notify/session', 'GET /notify/session', 'GET /notify/session'])
  t.same(waits, [1000, 3000], 'each wait the longer of its delay and the Retry-After')
})

t.test('the retries are bounded: the last 503 is the refusal', async (t) => {
  const { fetch, seen } = scripted([unavailable, unavailable, unavailable])
  const broker = new BrokerClient({ url: 'http://cloud.test', fetch, sleep: async () => {}, unavailableDelays: [5, 5] })
  await t.rejects(broker.anonymousSession(), BrokerRefusedError)
  t.equal(seen.length, 3, 'the first try and two retries')
})

t.test('a Retry-After beyond 10 s is capped; one that is no number counts as none', async (t) => {
  const { fetch } = scripted([{ ...unavailable, retryAfter: '86400' }, { ...unavailable, retryAfter: 'soon' }, session])
  const waits: number[] = []
  const broker = new BrokerClient({ url: 'http://cloud.test', fetch, sleep: async (ms) => void waits.push(ms) })
  await broker.anonymousSession()
  t.same(waits, [10_000, 2000])
})

t.test('a 503 timeout or any other refusal is not asked again', async (t) => {
  for (const refusal of [
    { status: 503, body: { error: 'timeout', message: 'the handler did not answer' }, retryAfter: '1' },
    { status: 429, body: { error: 'rate_limited', message: 'slow down' }, retryAfter: '1' },
    { status: 500, body: { error: 'internal', message: 'oops' } },
  ]) {
    const { fetch, seen } = scripted([refusal, session])
    const broker = new BrokerClient({ url: 'http://cloud.test', fetch, sleep: async () => {} })
    await t.rejects(broker.anonymousSession(), { name: 'BrokerRefusedError', status: refusal.status })
    t.equal(seen.length, 1, `${refusal.status} ${refusal.body.error}: one request`)
  }
})
