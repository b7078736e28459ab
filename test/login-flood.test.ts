// Strangers cannot lock the owner out of login (issue 22 item 1): the login queue is bounded per
// client and in all, shares turns out between clients, refuses what does not fit at once (429 with
// Retry-After), and drops attempts nobody awaits any more.
import t from 'tap'
import { hostClock } from '../hal/sim/host-clock.js'
import { performance } from 'node:perf_hooks'
import { login, loginChallenge } from '../actors/auth/login.js'
import { initChallenge, personalise } from '../actors/auth/personalise.js'
import { buildInitEjwt, buildLoginEjwt } from '../client/index.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { authActorOn } from './helpers/auth-actor.js'
import { call } from './helpers/http.js'
import { defaultCfg, keys, MASTER_PASS, owned, USER_PASS } from './helpers/owner.js'
import { identity, scriptedIdentity } from './helpers/scripted-identity.js'

const json = { 'content-type': 'application/json' }

t.test("200 junk attempts in flight from one client; the owner's login from another gets in within 5 s", async (t) => {
  // The brake on the host's clock: with its sleeps skipped, the junk would race through the queue
  // while the owner's request is on its way, and the queue's turns would mean nothing.
  const { base } = await owned(t, { boot: { clock: hostClock } })
  // The owner's client is 127.0.0.2 (loopback too): another client than the junk's 127.0.0.1.
  const owner = { localAddress: '127.0.0.2' }
  const challenge = (await call(`${base}/api/auth/token`, owner)).json
  // The passphrase's key is derived before the clock starts: that is the client's time, not the device's.
  const key = await keys.get(USER_PASS, challenge.eid)

  const junk = Array.from({ length: 200 }, (_, i) =>
    call(`${base}/api/auth/token`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ auth: `junk.${i}.attempt` }),
      localAddress: '127.0.0.1',
    }),
  )
  // Every one of them has reached the device once the first refusals come back.
  await Promise.race(junk)

  const started = performance.now()
  const answer = await call(`${base}/api/auth/token`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ auth: buildLoginEjwt(key, challenge, 'system:config', 3600) }),
    ...owner,
  })
  const ms = performance.now() - started
  t.equal(answer.status, 200, 'the owner is let in')
  t.ok(ms < 5000, `within 5 s of a flood (${ms.toFixed(0)} ms)`)
  t.ok(ms >= 500, 'and no sooner than the brake says')

  const answers = await Promise.all(junk)
  const refused = answers.filter((a) => a.status === 429)
  t.ok(refused.length >= 150, `what did not fit was refused at once (${refused.length} of 200)`)
  t.same(
    answers.filter((a) => a.status !== 429).map((a) => a.status),
    answers.filter((a) => a.status !== 429).map(() => 400),
    'the rest were examined: malformed',
  )
  for (const a of refused.slice(0, 5)) {
    t.match(a.json, { error: 'too_many_requests' })
    t.match(a.headers['retry-after'], /^[1-9]\d*$/, 'with Retry-After in seconds')
  }
})

t.test('a login whose deadline passed while it waited is not worked through', async (t) => {
  const { hal, connect, journaled, journal } = await scriptedIdentity(t, 'E', identity(false))
  const actor = await authActorOn(t, { hal, connect }, { journal })
  const init = initChallenge(actor).body as { exp: number; spk: string; jti: string; eid: string }
  const master = await keys.get(MASTER_PASS, init.eid)
  const user = await keys.get(USER_PASS, init.eid)
  const cfg = defaultCfg('E', user, master)
  const ejwt = buildInitEjwt(master, init, cfg, Math.floor(Date.now() / 1000))
  t.equal((await personalise(actor, { rid: 'init', tls: true, body: { init: ejwt } })).status, 200)

  const challenge = loginChallenge(actor, { source: '10.0.0.2' }).body as typeof init & { lbl: string }
  const auth = JSON.stringify({ auth: buildLoginEjwt(user, challenge, 'system:config', 3600) })
  // A junk attempt holds the queue for the brake's 500 ms; the owner's gives up after 100.
  const junk = login(actor, { rid: 'junk', tls: false, source: '10.0.0.1', body: { raw: '{}' } })
  const late = login(actor, {
    rid: 'late',
    tls: false,
    source: '10.0.0.2',
    deadline: Date.now() + 100,
    body: { raw: auth },
  })
  t.equal((await junk).status, 400)
  t.equal((await late).status, 504, 'dropped once its turn came')
  t.notOk(
    journaled.some((e) => e.type === LogType.AUTH_SUCCESS_INTERNAL && e.result === LogResult.OK),
    'nobody was let in',
  )
  const again = await login(actor, { rid: 'again', tls: false, source: '10.0.0.2', body: { raw: auth } })
  t.equal(again.status, 200, 'its challenge was never consumed: the same eJWT is still good')
})
