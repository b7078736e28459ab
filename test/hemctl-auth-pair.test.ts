// hemctl auth pair (ext-auth-contract Sequence A) against a device and a broker in their place: the
// requests it makes, in order, with their scopes and bodies, what it shows the owner to scan, and how it
// ends on each answer of the broker (pending, replied, refused or expired, no answer in time).
import { createHash } from 'node:crypto'
import t from 'tap'
import { type Answer, extValues, fakeDeviceAndBroker, hemctlWaiting, type Seen } from './helpers/ext-owner-fakes.js'

type Request = Seen & { to: 'device' | 'broker' }

/** The device and the broker of a pairing that the phone answers at the `repliedAt`-th check. */
function pairingAnswers(v: ReturnType<typeof extValues>, check: (n: number) => Answer) {
  let checks = 0
  return ({ to, method, path }: Request): Answer | undefined => {
    const route = `${to} ${method} ${path}`
    if (route === 'device GET /api/system/config')
      return { status: 200, body: { eid: v.eid, user: 'Ada', email: 'ada@example.com', hostname: 'hem.example' } }
    if (route === 'broker POST /notify/session') return { status: 200, body: { epk: v.epk, exp: 2e9, paired: false } }
    if (route === 'device POST /api/auth/ext/init') return { status: 200, body: { request: v.request, eid: v.eid } }
    if (route === 'broker POST /notify/register/init')
      return { status: 200, body: { rid: v.rid, link: `https://api.example/notify/register/challenge/${v.rid}` } }
    if (route === `broker GET /notify/register/check/${v.rid}`) return check(++checks)
    if (route === 'device POST /api/auth/ext/validate') return { status: 200, body: { kid: v.kid, code: v.code } }
    if (route === `broker POST /notify/register/finalise/${v.rid}`)
      return { status: 200, body: { pid: v.pid, status: 'paired' } }
    return undefined
  }
}

const repliedAt = (v: ReturnType<typeof extValues>, at: number) => (n: number) =>
  n < at ? { status: 202, body: { status: 'pending' } } : { status: 200, body: { pid: v.pid, reply: v.reply } }

t.test('pair: config, session {eid}, ext/init, register/init, QR, checks until 200, validate, finalise', async (t) => {
  const v = extValues()
  const { asked, url, cloud } = await fakeDeviceAndBroker(t, pairingAnswers(v, repliedAt(v, 3)))
  const run = await hemctlWaiting(url, t.testdir())(['auth', 'pair', '--cloud', cloud], { stderrIsTTY: true })
  t.equal(run.code, 0, run.stderr)
  const link = `https://api.example/notify/register/challenge/${v.rid}`
  t.same(
    asked().map(({ to, method, path, token, body }) => ({ to, method, path, token, body })),
    [
      { to: 'device', method: 'GET', path: '/api/system/config', token: 'auth:ext:pair', body: {} },
      { to: 'broker', method: 'POST', path: '/notify/session', token: undefined, body: { eid: v.eid } },
      { to: 'device', method: 'POST', path: '/api/auth/ext/init', token: 'auth:ext:pair', body: { epk: v.epk } },
      {
        to: 'broker',
        method: 'POST',
        path: '/notify/register/init',
        token: undefined,
        body: { epk: v.epk, eid: v.eid, request: v.request },
      },
      ...[1, 2, 3].map(() => ({
        to: 'broker',
        method: 'GET',
        path: `/notify/register/check/${v.rid}`,
        token: undefined,
        body: {},
      })),
      {
        to: 'device',
        method: 'POST',
        path: '/api/auth/ext/validate',
        token: 'auth:ext:pair',
        body: { pid: v.pid, reply: v.reply },
      },
      {
        to: 'broker',
        method: 'POST',
        path: `/notify/register/finalise/${v.rid}`,
        token: undefined,
        body: { kid: v.kid, code: v.code },
      },
    ],
  )
  t.same(run.pauses, [3000, 3000], 'the broker is asked every 3 s')
  const hash = createHash('sha256').update(v.request).digest('base64')
  const payload = `{"link":"${link}","hash":"${hash}","user":"Ada","email":"ada@example.com","hostname":"hem.example"}`
  t.match(run.stdout, `payload: ${payload}\nlink: ${link}\n`, 'the QR payload, keys in the family order, and the link')
  t.match(run.stdout, /▄/, 'a QR code drawn for the terminal')
  t.match(run.stdout, /paired: KID [0-9a-f]{32}, label "Pixel 9 \(Android\)"\n$/)
  t.match(run.stdout, v.kid)
  t.match(run.stderr, 'waiting for the authenticator | (0s)…', 'a progress line while waiting')
  t.match(run.stderr, '(3s)…')
  t.equal(run.listening, 0, 'Ctrl-C has its default again')
})

t.test('pair --json: the result alone on stdout, what to scan on stderr', async (t) => {
  const v = extValues()
  const { url, cloud } = await fakeDeviceAndBroker(t, pairingAnswers(v, repliedAt(v, 1)))
  const run = await hemctlWaiting(url, t.testdir())(['auth', 'pair', '--cloud', cloud, '--json'])
  t.equal(run.code, 0, run.stderr)
  t.same(JSON.parse(run.stdout), { kid: v.kid, label: 'Pixel 9 (Android)', pid: v.pid })
  t.match(run.stderr, /payload: \{"link":/)
})

t.test('pair: a registration the phone refused or that expired ends in exit 4, the device told nothing', async (t) => {
  for (const reason of ['refused', 'expired']) {
    const v = extValues()
    const gone = (n: number) =>
      n < 2 ? { status: 202, body: { status: 'pending' } } : { status: 410, body: { reason } }
    const { asked, url, cloud } = await fakeDeviceAndBroker(t, pairingAnswers(v, gone))
    const run = await hemctlWaiting(url, t.testdir())(['auth', 'pair', '--cloud', cloud])
    t.equal(run.code, 4, reason)
    t.match(run.stderr, `hemctl auth pair: the broker closed the pairing: ${reason}\n`)
    t.notOk(
      asked().some((s) => s.path === '/api/auth/ext/validate' || s.path.includes('finalise')),
      'nothing stored, nothing finalised',
    )
  }
})

t.test('pair --wait: no answer in time ends in exit 4 after that many seconds of polls', async (t) => {
  const v = extValues()
  const { asked, url, cloud } = await fakeDeviceAndBroker(t, pairingAnswers(v, repliedAt(v, 1000)))
  const run = await hemctlWaiting(url, t.testdir())(['auth', 'pair', '--cloud', cloud, '--wait', '7'])
  t.equal(run.code, 4)
  t.match(run.stderr, 'hemctl auth pair: no authenticator answered within 7 s\n')
  t.same(run.pauses, [3000, 3000, 1000])
  t.notOk(asked().some((s) => s.path === '/api/auth/ext/validate'))
})

t.test('pair: Ctrl-C while waiting exits 130; nothing is stored or finalised', async (t) => {
  const v = extValues()
  const { asked, url, cloud } = await fakeDeviceAndBroker(t, pairingAnswers(v, repliedAt(v, 1000)))
  const run = await hemctlWaiting(url, t.testdir())(['auth', 'pair', '--cloud', cloud], {
    onPause: (pauses, interrupts) => void (pauses.length === 1 && interrupts.emit('SIGINT')),
  })
  t.match(run, { code: 130, stderr: 'hemctl auth pair: interrupted\n' })
  t.equal(asked().filter((s) => s.path.startsWith('/notify/register/check')).length, 1, 'no poll after Ctrl-C')
  t.notOk(asked().some((s) => s.path === '/api/auth/ext/validate'))
  t.equal(run.listening, 0)
})

t.test('pair: refusals of the device and the broker exit as hemctl does, and stop the flow there', async (t) => {
  const v = extValues()
  let init: Answer = { status: 403, body: { error: 'forbidden', message: 'scope' } }
  let register: Answer | undefined
  const { asked, url, cloud } = await fakeDeviceAndBroker(t, (request) => {
    if (request.path === '/api/auth/ext/init') return init
    if (request.path === '/notify/register/init' && register) return register
    return pairingAnswers(v, repliedAt(v, 1))(request)
  })
  const hemctl = hemctlWaiting(url, t.testdir())
  t.match(await hemctl(['auth', 'pair', '--cloud', cloud]), {
    code: 4,
    stderr: 'hemctl auth pair: POST /api/auth/ext/init: the device answered 403 (scope)\n',
  })
  t.notOk(asked().some((s) => s.path === '/notify/register/init'))
  init = { status: 409, body: { error: 'fail_state' } }
  t.match(await hemctl(['auth', 'pair', '--cloud', cloud]), { code: 1, stderr: /answered 409 \(fail_state\)/ })
  init = { status: 200, body: { request: v.request, eid: v.eid } }
  register = { status: 401, body: { error: 'bad_request_mac', message: 'request does not verify' } }
  t.match(await hemctl(['auth', 'pair', '--cloud', cloud]), {
    code: 1,
    stderr: 'hemctl auth pair: POST /notify/register/init: the broker answered 401 (request does not verify)\n',
  })
  register = { status: 200, body: { rid: '../x', link: 'https://api.example/x' } }
  t.match(await hemctl(['auth', 'pair', '--cloud', cloud]), {
    code: 1,
    stderr: /lacks rid, link, or has them malformed/,
  })
  t.notOk(
    asked().some((s) => s.path.startsWith('/notify/register/check')),
    'a malformed rid is never put in a path',
  )
})

t.test('pair: a device answering ext/init for another eid than its own is not believed', async (t) => {
  const v = extValues()
  const { asked, url, cloud } = await fakeDeviceAndBroker(t, (request) =>
    request.path === '/api/auth/ext/init'
      ? { status: 200, body: { request: v.request, eid: extValues().eid } }
      : pairingAnswers(v, repliedAt(v, 1))(request),
  )
  const run = await hemctlWaiting(url, t.testdir())(['auth', 'pair', '--cloud', cloud])
  t.match(run, { code: 1, stderr: /another eid than its own/ })
  t.notOk(asked().some((s) => s.path === '/notify/register/init'))
})

t.test('pair: usage errors ask nothing of the device', async (t) => {
  const v = extValues()
  const { asked, url, cloud } = await fakeDeviceAndBroker(t, pairingAnswers(v, repliedAt(v, 1)))
  const hemctl = hemctlWaiting(url, t.testdir())
  t.match(await hemctl(['auth', 'pair']), { code: 2, stderr: /--cloud URL is needed/ })
  t.match(await hemctl(['auth', 'pair', '--cloud', cloud, '--wait', '0']), { code: 2, stderr: /--wait must be/ })
  t.match(await hemctl(['auth', 'pair', '--cloud', 'ftp://x']), { code: 2, stderr: /must be https/ })
  t.match(await hemctl(['auth', 'pair', '--cloud', cloud, '--cloud-ca', '/nonexistent']), {
    code: 2,
    stderr: /cannot read the cloud's CA file/,
  })
  t.same(asked(), [])
})
