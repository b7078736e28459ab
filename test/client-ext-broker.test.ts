// The client library's broker client (ext-auth-contract §3.4) against a server in the broker's place:
// the exact requests, each polling answer (202, 200, 410) as its state, refusals and malformed answers
// as their errors, ids that could leave their path refused before sending, and HTTPS trusting a CA.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { BrokerClient, BrokerUnreachableError, fetchTrusting, UnexpectedBrokerAnswerError } from '../client/index.js'
import { extValues, key32 } from './helpers/ext-owner-fakes.js'
import { type Answer, recordingDevice, type Seen } from './helpers/recording-device.js'

const v = extValues()

async function broker(t: Parameters<typeof recordingDevice>[0], answer: (request: Seen) => Answer) {
  const { seen, url } = await recordingDevice(t, answer)
  return { seen, broker: new BrokerClient({ url }) }
}

t.test('each route: method, path and body as the contract has them; answers as typed values', async (t) => {
  const proof = { nonce: key32(), mac: key32(), eid: v.eid, epk: v.epk }
  const sub = { pid: v.pid, label: 'Pixel', kid: v.kid, aid: v.aid, created: 5, extra: 'ignored' }
  const { seen, broker: b } = await broker(t, ({ method, path }) => {
    const answers: Record<string, unknown> = {
      'GET /notify/session': { epk: v.epk, exp: 99 },
      'POST /notify/session': { epk: v.epk, exp: 99, paired: true },
      'POST /notify/register/init': { rid: v.rid, link: 'https://cloud.example/notify/register/challenge/x', exp: 7 },
      [`POST /notify/register/finalise/${v.rid}`]: { pid: v.pid, status: 'paired' },
      'POST /notify/event/new': { eventid: v.eventid, sentcnt: 2, exp: 9, ipinfo_you: { ip: '::1' } },
      [`DELETE /notify/event/${v.eventid}`]: { deleted: true },
      'POST /notify/subscribers/list': [sub],
      'POST /notify/subscribers/delete': { deleted: v.pid },
    }
    const body = answers[`${method} ${path}`]
    return body === undefined ? { status: 404 } : { status: 200, body }
  })
  t.same(await b.anonymousSession(), { epk: v.epk, exp: 99 })
  t.same(await b.deviceSession(v.eid), { epk: v.epk, exp: 99, paired: true })
  t.same(await b.registerInit({ epk: v.epk, eid: v.eid, request: v.request }), {
    rid: v.rid,
    link: 'https://cloud.example/notify/register/challenge/x',
    exp: 7,
  })
  t.same(await b.registerFinalise(v.rid, { kid: v.kid, code: v.code }), { pid: v.pid })
  t.same(await b.eventNew({ authreq: v.authreq, epk: v.epk }), { eventid: v.eventid, sentcnt: 2, exp: 9 })
  t.equal(await b.eventDelete(v.eventid), 'withdrawn')
  t.same(await b.subscribersList(proof), [{ pid: v.pid, label: 'Pixel', kid: v.kid, aid: v.aid, created: 5 }])
  t.same(await b.subscribersDelete({ ...proof, pid: v.pid }), { deleted: v.pid })
  t.same(
    seen.map(({ method, path, body }) => [method, path, body]),
    [
      ['GET', '/notify/session', {}],
      ['POST', '/notify/session', { eid: v.eid }],
      ['POST', '/notify/register/init', { epk: v.epk, eid: v.eid, request: v.request }],
      ['POST', `/notify/register/finalise/${v.rid}`, { kid: v.kid, code: v.code }],
      ['POST', '/notify/event/new', { authreq: v.authreq, epk: v.epk }],
      ['DELETE', `/notify/event/${v.eventid}`, {}],
      ['POST', '/notify/subscribers/list', proof],
      ['POST', '/notify/subscribers/delete', { ...proof, pid: v.pid }],
    ],
    'JSON bodies with Content-Type application/json (the recorder reads no other), none on GET and DELETE',
  )
})

t.test('register/check and event/check: 202 pending, 200 the answer, 410 closed with its reason', async (t) => {
  let answer: Answer = { status: 202, body: { status: 'pending' } }
  const { broker: b } = await broker(t, () => answer)
  t.same(await b.registerCheck(v.rid), { state: 'pending' })
  t.same(await b.eventCheck(v.eventid), { state: 'pending' })
  answer = { status: 200, body: { pid: v.pid, reply: v.reply } }
  t.same(await b.registerCheck(v.rid), { state: 'replied', pid: v.pid, reply: v.reply })
  answer = { status: 200, body: { authreply: v.authreply, pid: v.pid } }
  t.same(await b.eventCheck(v.eventid), { state: 'allowed', pid: v.pid, authreply: v.authreply })
  answer = { status: 200, body: { deny: true, pid: v.pid } }
  t.same(await b.eventCheck(v.eventid), { state: 'denied', pid: v.pid })
  answer = { status: 410, body: { reason: 'refused' } }
  t.same(await b.registerCheck(v.rid), { state: 'closed', reason: 'refused' })
  answer = { status: 410, body: { error: 'gone' } }
  t.same(await b.eventCheck(v.eventid), { state: 'closed', reason: 'gone' })
  t.equal(await b.eventDelete(v.eventid), 'closed', 'a DELETE of an event already over')
  answer = { status: 404, body: { error: 'not_found', message: 'no such event' } }
  await t.rejects(b.eventCheck(v.eventid), {
    name: 'BrokerRefusedError',
    status: 404,
    code: 'not_found',
    message: `GET /notify/event/check/${v.eventid}: the broker answered 404 (no such event)`,
  })
})

t.test('answers not in the shape of the contract are not believed', async (t) => {
  let answer: Answer = { status: 200 }
  const { broker: b } = await broker(t, () => answer)
  const cases: [string, Answer, () => Promise<unknown>][] = [
    [
      'a session key of 31 bytes',
      { status: 200, body: { epk: key32().slice(0, 40), exp: 1 } },
      () => b.anonymousSession(),
    ],
    ['a session without paired', { status: 200, body: { epk: v.epk, exp: 1 } }, () => b.deviceSession(v.eid)],
    [
      'a rid that leaves its path',
      { status: 200, body: { rid: 'a/../b', link: 'https://x' } },
      () => b.registerInit(v),
    ],
    [
      'a link that is no web URL',
      { status: 200, body: { rid: 'r', link: 'javascript:alert(1)' } },
      () => b.registerInit(v),
    ],
    ['a reply that is no eJWT', { status: 200, body: { pid: v.pid, reply: 'x.y.z' } }, () => b.registerCheck('r')],
    [
      'deny and authreply at once',
      { status: 200, body: { deny: true, authreply: v.authreply, pid: v.pid } },
      () => b.eventCheck('e'),
    ],
    ['an allow without pid', { status: 200, body: { authreply: v.authreply } }, () => b.eventCheck('e')],
    ['an event without sentcnt', { status: 200, body: { eventid: 'e', exp: 1 } }, () => b.eventNew(v)],
    [
      'a list that is an object',
      { status: 200, body: { list: [] } },
      () => b.subscribersList({ ...v, nonce: '', mac: '' }),
    ],
    ['an answer that is no JSON', { status: 200, text: '<html>' }, () => b.anonymousSession()],
  ]
  for (const [what, given, call] of cases) {
    answer = given
    await t.rejects(call(), UnexpectedBrokerAnswerError, what)
  }
})

t.test('ids and keys that the broker would refuse, or that could leave their path, are not sent', async (t) => {
  const { seen, broker: b } = await broker(t, () => ({ status: 200 }))
  await t.rejects(b.registerCheck('../../api'), RangeError)
  await t.rejects(b.eventCheck('a?b'), RangeError)
  await t.rejects(b.eventDelete(''), RangeError)
  await t.rejects(b.deviceSession('AAAA'), RangeError)
  t.same(seen, [])
  t.throws(() => new BrokerClient({ url: 'file:///etc/passwd' }), RangeError)
})

t.test('a base URL with a path keeps it; an unreachable broker is BrokerUnreachableError with its cause', async (t) => {
  const { seen, url } = await recordingDevice(t, () => ({ status: 200, body: { epk: v.epk, exp: 1 } }))
  await new BrokerClient({ url: `${url}/cloud` }).anonymousSession()
  t.equal(seen[0]!.path, '/cloud/notify/session')
  const err = await new BrokerClient({ url: 'http://127.0.0.1:1' }).anonymousSession().catch((e: unknown) => e)
  t.type(err, BrokerUnreachableError)
  t.ok((err as Error).cause, 'the fetch error as cause')
  t.match((err as Error).message, 'cannot reach the broker at http://127.0.0.1:1')
})

t.test('fetchTrusting(ca): HTTPS to a cloud whose certificate that CA made; without it, no connection', async (t) => {
  const dir = t.testdir()
  const [cert, key] = [join(dir, 'cloud.pem'), join(dir, 'cloud.key')]
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1']
  const names = ['-subj', '/CN=cloud', '-addext', 'subjectAltName=IP:127.0.0.1']
  execFileSync('openssl', [...args, ...names, '-keyout', key, '-out', cert], { stdio: 'ignore' })
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    const body = JSON.stringify(req.method === 'POST' ? { epk: v.epk, exp: 1, paired: false } : { epk: v.epk, exp: 1 })
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  const trusting = new BrokerClient({ url, fetch: fetchTrusting(readFileSync(cert)) })
  t.same(await trusting.anonymousSession(), { epk: v.epk, exp: 1 })
  t.same(await trusting.deviceSession(v.eid), { epk: v.epk, exp: 1, paired: false })
  await t.rejects(new BrokerClient({ url }).anonymousSession(), BrokerUnreachableError, 'the system CAs do not know it')
  const refused = new BrokerClient({ url: 'https://127.0.0.1:1', fetch: fetchTrusting(readFileSync(cert)) })
  await t.rejects(refused.anonymousSession(), BrokerUnreachableError)
})
