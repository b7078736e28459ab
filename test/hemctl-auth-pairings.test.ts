// hemctl auth pairings and auth unpair (ext-auth-contract §1.6, §3.4.7) against a device and a broker in
// their place: the device's pairings as keys, the broker's view proved by the device (a fresh ext/mac
// per broker call), and what an unpair removes where, said in so many words.
import t, { type Test } from 'tap'
import {
  type Answer,
  type ExtValues,
  extValues,
  fakeDeviceAndBroker,
  hemctlWaiting,
  key32,
  type Seen,
} from './helpers/ext-owner-fakes.js'

type Request = Seen & { to: 'device' | 'broker' }

interface Sides {
  /** The pairings the device lists. */
  device: ExtValues[]
  /** The pairings the broker lists. */
  broker: ExtValues[]
  /** The broker's answer to subscribers/delete. */
  deleted?: Answer
}

/** A device with `sides.device` paired, and a broker with `sides.broker`; each ext/mac makes a fresh nonce. */
function pairingAnswers(eid: string, epk: string, sides: Sides) {
  return ({ to, method, path, body }: Request): Answer | undefined => {
    const route = `${to} ${method} ${path}`
    if (route === 'device POST /api/keymgmt/search') {
      const list = (body.offset ?? 0) === 0 ? sides.device.map(keyEntry) : []
      return { status: 200, body: { offset: body.offset ?? 0, total: 20, listed: list.length, list } }
    }
    if (route === 'device GET /api/system/config') return { status: 200, body: { eid, user: 'Ada' } }
    if (route === 'broker POST /notify/session') return { status: 200, body: { epk, exp: 2e9, paired: true } }
    if (route === 'device POST /api/auth/ext/mac') return { status: 200, body: { nonce: key32(), mac: key32(), eid } }
    if (route === 'broker POST /notify/subscribers/list') return { status: 200, body: sides.broker.map(subscriber) }
    if (route === 'broker POST /notify/subscribers/delete')
      return sides.deleted ?? { status: 200, body: { deleted: body.pid } }
    if (method === 'DELETE' && path.startsWith('/api/keymgmt/delete/')) return { status: 200 }
    return undefined
  }
}

const keyEntry = (p: ExtValues) => ({
  kid: p.kid,
  created: 1,
  updated: 1,
  type: 'ECDH,CURVE25519',
  label: 'Pixel 9',
  descr: p.descr,
})
const subscriber = (p: ExtValues) => ({ pid: p.pid, label: 'Pixel 9', kid: p.kid, aid: p.aid, created: 1 })

async function setUp(t: Test, sides: Sides) {
  const { eid, epk } = extValues()
  const fake = await fakeDeviceAndBroker(t, pairingAnswers(eid, epk, sides))
  return { eid, epk, ...fake, hemctl: hemctlWaiting(fake.url, t.testdir()) }
}

const routes = (seen: Request[]) =>
  seen.filter((s) => s.path !== '/api/auth/token').map(({ to, method, path }) => `${to} ${method} ${path}`)

t.test('pairings: the device keys whose descr is EXTAID ‖ pid, searched with keymgmt:search', async (t) => {
  const [a, b] = [extValues(), extValues()]
  const { seen, hemctl } = await setUp(t, { device: [a!, b!], broker: [] })
  const run = await hemctl(['auth', 'pairings'])
  t.equal(run.code, 0, run.stderr)
  t.match(
    seen.find((s) => s.path === '/api/keymgmt/search'),
    { token: 'keymgmt:search', body: { descr: '^RVhUQUlE' } },
  )
  const rows = [a!, b!].map((p) => `${p.kid}  ${p.pid}  "Pixel 9"\n`)
  t.equal(run.stdout, `${'KID'.padEnd(32)}  ${'PID'.padEnd(44)}  LABEL\n${rows.join('')}`)
  t.same(JSON.parse((await hemctl(['auth', 'pairings', '--json'])).stdout), {
    device: [a, b].map((p) => ({ kid: p!.kid, label: 'Pixel 9', pid: p!.pid, created: 1 })),
  })
  t.equal(routes(seen).filter((r) => r.startsWith('broker')).length, 0, 'no --cloud, no broker')
})

t.test('pairings: none is said so', async (t) => {
  const { hemctl } = await setUp(t, { device: [], broker: [] })
  t.match(await hemctl(['auth', 'pairings']), { code: 0, stdout: 'No authenticator is paired with the device.\n' })
})

t.test('pairings --cloud: the broker view after the device proof, each side missing a pairing named', async (t) => {
  const [both, deviceOnly, brokerOnly] = [extValues(), extValues(), extValues()]
  const sides = { device: [both, deviceOnly], broker: [both, brokerOnly] }
  const { eid, epk, seen, cloud, hemctl } = await setUp(t, sides)
  const run = await hemctl(['auth', 'pairings', '--cloud', cloud])
  t.equal(run.code, 0, run.stderr)
  t.same(routes(seen), [
    'device POST /api/keymgmt/search',
    'device GET /api/system/config',
    'broker POST /notify/session',
    'device POST /api/auth/ext/mac',
    'broker POST /notify/subscribers/list',
  ])
  t.same(seen.find((s) => s.path === '/notify/session')!.body, { eid })
  t.match(
    seen.find((s) => s.path === '/api/auth/ext/mac'),
    { token: 'auth:ext:pair', body: { epk } },
  )
  const proof = seen.find((s) => s.path === '/notify/subscribers/list')!.body
  t.same(Object.keys(proof).sort(), ['eid', 'epk', 'mac', 'nonce'])
  t.match(proof, { eid, epk })
  t.match(run.stdout, `${both.kid}  ${both.pid}  "Pixel 9"\n`)
  t.match(run.stdout, `${deviceOnly.kid}  ${deviceOnly.pid}  "Pixel 9"  (not at the broker: it gets no request)\n`)
  t.match(run.stdout, `At the broker only (the device has no key for them):\n`)
  t.match(run.stdout, `${brokerOnly.kid}  ${brokerOnly.pid}  "Pixel 9"\n`)
  const json = JSON.parse((await hemctl(['auth', 'pairings', '--cloud', cloud, '--json'])).stdout)
  t.same(json.broker, [both, brokerOnly].map(subscriber))
})

t.test('pairings: a label with a terminal escape is shown without it', async (t) => {
  const p = extValues()
  const sides = { device: [], broker: [] }
  const fake = await fakeDeviceAndBroker(t, (request) =>
    request.path === '/notify/subscribers/list'
      ? { status: 200, body: [{ ...subscriber(p), label: 'evil\u001b]0;pwned\u0007' }] }
      : pairingAnswers(p.eid, p.epk, sides)(request),
  )
  const run = await hemctlWaiting(fake.url, t.testdir())(['auth', 'pairings', '--cloud', fake.cloud])
  t.equal(run.code, 0, run.stderr)
  t.notMatch(run.stdout, /\u001b|\u0007/)
  t.match(run.stdout, '"evil?]0;pwned?"')
})

t.test('unpair KID: the device key deleted with keymgmt:del; a KID that is no pairing is not deleted', async (t) => {
  const p = extValues()
  const { seen, hemctl } = await setUp(t, { device: [p], broker: [] })
  const run = await hemctl(['auth', 'unpair', p.kid.toUpperCase()])
  t.match(run, { code: 0, stdout: `removed from the device: KID ${p.kid}\n` })
  t.match(seen.at(-1), { method: 'DELETE', path: `/api/keymgmt/delete/${p.kid}`, token: 'keymgmt:del' })
  const other = extValues().kid
  t.match(await hemctl(['auth', 'unpair', other]), { code: 1, stderr: `hemctl auth unpair: ${other} is no pairing` })
  t.equal(seen.filter((s) => s.method === 'DELETE').length, 1, 'only the pairing was deleted')
  t.match(await hemctl(['auth', 'unpair', 'abc']), { code: 2, stderr: /a KID is 32 hex digits/ })
})

t.test('unpair --cloud: the device key, then the broker with a fresh device proof and the pid', async (t) => {
  const p = extValues()
  const { eid, epk, seen, cloud, hemctl } = await setUp(t, { device: [p], broker: [p] })
  const run = await hemctl(['auth', 'unpair', p.kid, '--cloud', cloud])
  t.equal(run.code, 0, run.stderr)
  t.equal(run.stdout, `removed from the device: KID ${p.kid}\nremoved from the broker: pid ${p.pid}\n`)
  t.same(routes(seen), [
    'device POST /api/keymgmt/search',
    `device DELETE /api/keymgmt/delete/${p.kid}`,
    'device GET /api/system/config',
    'broker POST /notify/session',
    'device POST /api/auth/ext/mac',
    'broker POST /notify/subscribers/delete',
  ])
  const mac = seen.find((s) => s.path === '/api/auth/ext/mac')!
  const told = seen.at(-1)!.body
  t.match(told, { eid, epk, pid: p.pid })
  t.same(Object.keys(told).sort(), ['eid', 'epk', 'mac', 'nonce', 'pid'])
  t.match(mac.body, { epk })
})

t.test('unpair --cloud: a pairing gone from the device is found at the broker by its KID', async (t) => {
  const p = extValues()
  const { seen, cloud, hemctl } = await setUp(t, { device: [], broker: [extValues(), p] })
  const run = await hemctl(['auth', 'unpair', p.kid, '--cloud', cloud, '--json'])
  t.equal(run.code, 0, run.stderr)
  t.same(JSON.parse(run.stdout), { kid: p.kid, pid: p.pid, device: 'absent', broker: 'removed' })
  t.notOk(seen.some((s) => s.method === 'DELETE'))
  const proofs = seen.filter((s) => s.path.startsWith('/notify/subscribers/')).map((s) => s.body.nonce)
  t.equal(proofs.length, 2)
  t.not(proofs[0], proofs[1], 'a proof is good once: each broker call has its own')
  t.equal(seen.at(-1)!.body.pid, p.pid)

  const gone = await hemctl(['auth', 'unpair', extValues().kid, '--cloud', cloud])
  t.match(gone, { code: 1, stderr: /is a pairing neither of the device nor of the broker/ })
})

t.test('unpair --cloud: a broker that knows no such pairing (404) is said so; the device key is gone', async (t) => {
  const p = extValues()
  const { cloud, hemctl } = await setUp(t, {
    device: [p],
    broker: [],
    deleted: { status: 404, body: { error: 'not_found' } },
  })
  const run = await hemctl(['auth', 'unpair', p.kid, '--cloud', cloud])
  t.match(run, { code: 0, stdout: `removed from the device: KID ${p.kid}\nthe broker has no pairing ${p.kid}\n` })
})

t.test('unpair --cloud: a broker that fails after the device key went says what was removed where', async (t) => {
  const p = extValues()
  const { seen, hemctl } = await setUp(t, { device: [p], broker: [p] })
  const run = await hemctl(['auth', 'unpair', p.kid, '--cloud', 'http://127.0.0.1:1'])
  t.equal(run.code, 3)
  t.match(run.stderr, `hemctl auth unpair: removed from the device (KID ${p.kid}), but not from the broker:\n`)
  t.match(run.stderr, /hemctl auth unpair: cannot reach the broker at http:\/\/127\.0\.0\.1:1/)
  t.ok(seen.some((s) => s.method === 'DELETE'))
})
