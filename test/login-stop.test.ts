// A device stopping amid logins: the gateway answers the logins in flight 503 `stopping` at once
// instead of awaiting them, also those whose client gave up: the gateway holds a connection's reads
// while its command runs (ConnectionReads), so it cannot see such a client go, and before, the stop
// waited for each login's 30 s deadline.
import t from 'tap'
import { hostClock } from '../hal/sim/host-clock.js'
import type { Clock } from '../hal/types.js'
import { buildLoginEjwt } from '../client/index.js'
import { call } from './helpers/http.js'
import { keys, owned } from './helpers/owner.js'
import { until } from './helpers/until.js'

const json = { 'content-type': 'application/json' }

/** The host's clock, but the device's sleeps (the brake's holds, the pace of checks) last until `release`. */
function heldSleeps(): Clock & { held(): number; release(): void } {
  const sleeping: (() => void)[] = []
  return {
    ...hostClock,
    sleep: () => new Promise<void>((resolve) => void sleeping.push(resolve)),
    held: () => sleeping.length,
    release() {
      for (const wake of sleeping.splice(0)) wake()
    },
  }
}

t.test('a stop answers the logins in flight 503 at once, one whose client gave up too', async (t) => {
  const clock = heldSleeps()
  const { base, device } = await owned(t, { boot: { clock } })
  const eid = (await call(`${base}/api/auth/token`)).json.eid as string
  const wrong = await keys.get('not the passphrase', eid)
  const guess = async (localAddress: string, signal?: AbortSignal) => {
    const challenge = (await call(`${base}/api/auth/token`, { localAddress })).json
    const auth = buildLoginEjwt(wrong, challenge, 'system:config', 3600)
    const body = JSON.stringify({ auth })
    return call(`${base}/api/auth/token`, {
      method: 'POST',
      headers: json,
      body,
      localAddress,
      ...(signal && { signal }),
    })
  }
  // The first guess is checked at once and held to its floor; the second waits for the pace's next place.
  const gaveUp = new AbortController()
  const abandoned = guess('127.0.0.3', gaveUp.signal).catch((error: unknown) => error)
  await until('the first guess held', () => clock.held() === 1)
  const waiting = guess('127.0.0.4')
  await until('the second guess waiting for its place', () => clock.held() === 2)
  gaveUp.abort()
  t.match(await abandoned, { name: 'AbortError' }, 'the first client gave up')

  const stopped = device.stop()
  const answer = await waiting
  t.equal(answer.status, 503, 'the waiting login is answered at the stop, not at its deadline')
  t.equal(answer.json?.error, 'stopping')
  // What the auth service still holds (the first guess's floor) lets it stop.
  clock.release()
  await stopped
})
