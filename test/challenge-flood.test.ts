// Login challenges cannot be flushed (issue 22 item 2): a flood of GET /api/auth/token from one
// client recycles that client's own challenges, never one issued to another client.
import t from 'tap'
import { buildLoginEjwt } from '../client/index.js'
import { call, type Answer } from './helpers/http.js'
import { keys, owned, USER_PASS } from './helpers/owner.js'

t.test("1 100 challenges fetched by one client do not evict another client's", async (t) => {
  const { base } = await owned(t)
  const owner = { localAddress: '127.0.0.2' }
  const challenge = (await call(`${base}/api/auth/token`, owner)).json
  const key = await keys.get(USER_PASS, challenge.eid)

  // 1 100 requests, 50 at a time: more than the 1024 challenges a single store held.
  const flood: Answer[] = []
  for (let sent = 0; sent < 1100; sent += 50) {
    const batch = Array.from({ length: 50 }, () => call(`${base}/api/auth/token`, { localAddress: '127.0.0.1' }))
    flood.push(...(await Promise.all(batch)))
  }
  t.ok(
    flood.every((a) => a.status === 200),
    'every stranger got a challenge',
  )

  const answer = await call(`${base}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: buildLoginEjwt(key, challenge, 'system:config', 3600) }),
    ...owner,
  })
  t.equal(answer.status, 200, 'the challenge fetched before the flood still logs the owner in')

  // The flood's own oldest are gone: only its client's newest 64 are kept.
  const stranger = flood[0]!.json
  const oldest = await call(`${base}/api/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth: buildLoginEjwt(key, stranger, 'system:config', 3600) }),
    localAddress: '127.0.0.1',
  })
  t.equal(oldest.status, 401, "the flooding client's first challenge was recycled")
})
