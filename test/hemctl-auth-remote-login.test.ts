// hemctl login --remote (ext-auth-contract Sequence B) against a device and a broker in their place:
// the requests in order (no passphrase, no bearer anywhere), and how the wait ends on each answer of
// the broker: an approval (the token), a denial, an expired or withdrawn event, no answer, Ctrl-C.
import t, { type Test } from 'tap'
import { type Answer, extValues, fakeDeviceAndBroker, hemctlWaiting, type Seen } from './helpers/ext-owner-fakes.js'

type Request = Seen & { to: 'device' | 'broker' }
type Values = ReturnType<typeof extValues>

const pending: Answer = { status: 202, body: { status: 'pending' } }

/** A device and a broker of one approval whose event/check answers `check(n)` at the n-th poll. */
function approvalAnswers(v: Values, check: (n: number) => Answer, o: { sentcnt?: number } = {}) {
  let checks = 0
  return ({ to, method, path }: Request): Answer | undefined => {
    const route = `${to} ${method} ${path}`
    if (route === 'broker GET /notify/session') return { status: 200, body: { epk: v.epk, exp: 2e9 } }
    if (route === 'device POST /api/auth/ext/request') return { status: 200, body: { authreq: v.authreq, epk: v.epk } }
    if (route === 'broker POST /notify/event/new')
      return { status: 200, body: { eventid: v.eventid, sentcnt: o.sentcnt ?? 1, exp: 2e9, ipinfo_you: {} } }
    if (route === `broker GET /notify/event/check/${v.eventid}`) return check(++checks)
    if (route === `broker DELETE /notify/event/${v.eventid}`) return { status: 200, body: { deleted: true } }
    if (route === 'device POST /api/auth/ext/token') return { status: 200, body: { token: 'h.p.s' } }
    return undefined
  }
}

const answeredAt = (at: number, answer: Answer) => (n: number) => (n < at ? pending : answer)

async function setUp(t: Test, answers: (v: Values) => (request: Request) => Answer | undefined) {
  const v = extValues()
  const fake = await fakeDeviceAndBroker(t, answers(v))
  return { v, ...fake, hemctl: hemctlWaiting(fake.url, t.testdir()) }
}

t.test(
  'login --remote: session, ext/request without a bearer, event/new, checks until allowed, ext/token',
  async (t) => {
    const { v, seen, cloud, hemctl } = await setUp(t, (v) =>
      approvalAnswers(v, answeredAt(3, { status: 200, body: { authreply: v.authreply, pid: v.pid } })),
    )
    const before = Math.floor(Date.now() / 1000)
    const argv = ['login', '--remote', '--cloud', cloud, '--scope', 'keymgmt:list', '--exp', '600', '--ctx', 'c1']
    const run = await hemctl([...argv, '--note', 'nightly backup'], { stderrIsTTY: true })
    t.equal(run.code, 0, run.stderr)
    t.equal(run.stdout, 'h.p.s\n')
    t.same(
      seen.map(({ to, method, path, token }) => ({ to, method, path, token })),
      [
        { to: 'broker', method: 'GET', path: '/notify/session', token: undefined },
        { to: 'device', method: 'POST', path: '/api/auth/ext/request', token: undefined },
        { to: 'broker', method: 'POST', path: '/notify/event/new', token: undefined },
        ...[1, 2, 3].map(() => ({
          to: 'broker',
          method: 'GET',
          path: `/notify/event/check/${v.eventid}`,
          token: undefined,
        })),
        { to: 'device', method: 'POST', path: '/api/auth/ext/token', token: undefined },
      ],
      'no login, no bearer: the approval is the credential',
    )
    const request = seen[1]!.body
    t.match(request, { epk: v.epk, scope: 'keymgmt:list', ctx: 'c1', note: 'nightly backup' })
    t.ok((request.exp as number) >= before + 600 && (request.exp as number) <= before + 602, 'exp is now + --exp')
    t.same(seen[2]!.body, { authreq: v.authreq, epk: v.epk }, "event/new gets the device's answer verbatim")
    t.same(seen.at(-1)!.body, { authreply: v.authreply })
    t.same(run.pauses, [3000, 3000])
    t.match(run.stderr, 'waiting for an authenticator | (0s)…')
    t.equal(run.listening, 0, 'Ctrl-C has its default again')

    const json = await hemctl(['login', '--remote', '--cloud', cloud, '--json'])
    t.equal(json.code, 0, json.stderr)
    t.same(JSON.parse(json.stdout), { token: 'h.p.s' })
    t.same(
      seen.findLast((s) => s.path === '/api/auth/ext/request')!.body,
      { epk: v.epk, scope: 'system:config' },
      'the default scope, and no optional field',
    )
  },
)

t.test('login --remote: a denial is exit 4 "denied"; the device is not asked for a token', async (t) => {
  const { seen, cloud, hemctl } = await setUp(t, (v) =>
    approvalAnswers(v, answeredAt(2, { status: 200, body: { deny: true, pid: v.pid } })),
  )
  const run = await hemctl(['login', '--remote', '--cloud', cloud])
  t.match(run, { code: 4, stdout: '', stderr: 'hemctl login: denied\n' })
  t.notOk(seen.some((s) => s.path === '/api/auth/ext/token'))
})

t.test('login --remote: an event the broker ended (410) is exit 4, expired or withdrawn', async (t) => {
  for (const [reason, told] of [
    ['expired', 'the request expired'],
    ['withdrawn', 'the request was withdrawn'],
  ] as const) {
    const { seen, cloud, hemctl } = await setUp(t, (v) =>
      approvalAnswers(v, answeredAt(1, { status: 410, body: { reason } })),
    )
    const run = await hemctl(['login', '--remote', '--cloud', cloud])
    t.match(run, { code: 4, stderr: `hemctl login: ${told}\n` })
    t.notOk(seen.some((s) => s.path === '/api/auth/ext/token'))
  }
})

t.test('login --remote: Ctrl-C withdraws the event (DELETE) and exits 130', async (t) => {
  const { v, seen, cloud, hemctl } = await setUp(t, (v) => approvalAnswers(v, () => pending))
  const run = await hemctl(['login', '--remote', '--cloud', cloud], {
    onPause: (pauses, interrupts) => void (pauses.length === 2 && interrupts.emit('SIGINT')),
  })
  t.match(run, { code: 130, stderr: 'hemctl login: interrupted; the request was withdrawn\n' })
  t.same(
    seen.slice(-1).map(({ method, path }) => `${method} ${path}`),
    [`DELETE /notify/event/${v.eventid}`],
  )
  t.equal(seen.filter((s) => s.path.startsWith('/notify/event/check')).length, 2, 'no poll after Ctrl-C')
  t.equal(run.listening, 0)
})

t.test('login --remote: no answer within --wait, or nobody to ask: the event is withdrawn, exit 4', async (t) => {
  const { v, seen, cloud, hemctl } = await setUp(t, (v) => approvalAnswers(v, () => pending))
  const run = await hemctl(['login', '--remote', '--cloud', cloud, '--wait', '5'])
  t.match(run, { code: 4, stderr: 'hemctl login: no authenticator answered within 5 s; the request was withdrawn\n' })
  t.same(run.pauses, [3000, 2000])
  t.equal(seen.at(-1)!.path, `/notify/event/${v.eventid}`)

  const none = await setUp(t, (v) => approvalAnswers(v, () => pending, { sentcnt: 0 }))
  const alone = await none.hemctl(['login', '--remote', '--cloud', none.cloud])
  t.match(alone, {
    code: 4,
    stderr: /no paired authenticator got the request \(hemctl auth pair\); the request was withdrawn/,
  })
  t.same(
    none.seen.slice(-2).map(({ method, path }) => `${method} ${path}`),
    ['POST /notify/event/new', `DELETE /notify/event/${none.v.eventid}`],
  )
})

t.test(
  'login --remote: refusals of ext/token exit as logins do (401: 4; 406: 1); a token-less answer is none',
  async (t) => {
    let token: Answer = { status: 401, body: { error: 'unauthorized' } }
    const { cloud, hemctl } = await setUp(
      t,
      (v) => (request) =>
        request.path === '/api/auth/ext/token'
          ? token
          : approvalAnswers(v, answeredAt(1, { status: 200, body: { authreply: v.authreply, pid: v.pid } }))(request),
    )
    t.match(await hemctl(['login', '--remote', '--cloud', cloud]), {
      code: 4,
      stderr: /ext\/token: the device answered 401/,
    })
    token = { status: 406, body: { error: 'not_acceptable', message: 'issuer not found' } }
    t.match(await hemctl(['login', '--remote', '--cloud', cloud]), {
      code: 1,
      stderr: /answered 406 \(issuer not found\)/,
    })
    token = { status: 200, body: { token: 'not a jwt' } }
    t.match(await hemctl(['login', '--remote', '--cloud', cloud]), { code: 1, stderr: /has no token/ })
  },
)

t.test('login --remote: a malformed check answer is not believed', async (t) => {
  const { seen, cloud, hemctl } = await setUp(t, (v) =>
    approvalAnswers(v, answeredAt(1, { status: 200, body: { deny: true, authreply: v.authreply, pid: v.pid } })),
  )
  t.match(await hemctl(['login', '--remote', '--cloud', cloud]), { code: 1, stderr: /deny or authreply, not both/ })
  t.notOk(seen.some((s) => s.path === '/api/auth/ext/token'))
})

t.test('login: options of --remote alone, and --remote without its cloud, are usage errors', async (t) => {
  const { seen, cloud, hemctl } = await setUp(t, (v) => approvalAnswers(v, () => pending))
  t.match(await hemctl(['login', '--exp', '60']), { code: 2, stderr: /--exp goes with --remote/ })
  t.match(await hemctl(['login', '--cloud', cloud]), { code: 2, stderr: /--cloud goes with --remote/ })
  t.match(await hemctl(['login', '--remote']), { code: 2, stderr: /--cloud URL is needed/ })
  t.match(await hemctl(['login', '--remote', '--cloud', cloud, '--lifetime', '60']), {
    code: 2,
    stderr: /grants the lifetime/,
  })
  t.match(await hemctl(['login', '--remote', '--cloud', cloud, '--master']), {
    code: 2,
    stderr: /--master does not apply/,
  })
  t.match(await hemctl(['login', '--remote', '--cloud', cloud, '--exp', 'soon']), { code: 2, stderr: /--exp must be/ })
  t.same(seen, [], 'nothing asked')
  t.match(await hemctl(['login', '--remote', '--cloud', cloud, '--ctx', 'x'.repeat(65)]), {
    code: 2,
    stderr: /ctx must be 1 to 64 characters/,
  })
  t.notOk(
    seen.some((s) => s.to === 'device'),
    'the device is asked nothing it would refuse as malformed',
  )
})
