// Approvals through the broker (contract §3.4.5, §3.4.6, §3.5.2): the checks of event/new, replayed and
// racing answers, an expired event, a wrong pid, a MAC with the wrong key, withdrawal and the bounds.

import t, { type Test } from 'tap'
import type { NotifyOptions } from '../cloud/notify/notify-routes.js'
import { signExtJwt } from '../protocol/index.js'
import { brokerUnderTest } from './helpers/notify-broker.js'
import { askApproval, dataPath, expectStatus, pair } from './helpers/notify-flows.js'
import { TestApp, TestDevice } from './helpers/notify-parties.js'

const randomPid = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')

async function paired(t: Test, options: Partial<NotifyOptions> = {}) {
  const broker = await brokerUnderTest(t, options)
  const device = new TestDevice()
  const app = new TestApp()
  const pid = await pair(broker, device, app)
  return { broker, device, app, pid, pairing: { pid, aid: app.aid } }
}

t.test('event/new: a current anonymous key, signed by iss for it, live, routed to active pairings', async (t) => {
  const { broker, device, pairing } = await paired(t)
  const { epk } = await expectStatus(broker.call('GET', '/notify/session'), 200)
  const now = broker.clock.now
  const post = (body: unknown) => broker.call('POST', '/notify/event/new', body)
  const base = { iss: device.eid, aud: epk, iat: now, exp: now + 3600, jti: 'AAAA', scope: {} }
  t.equal((await post({ epk, authreq: 'x.y.z' })).status, 400, 'a malformed authreq')
  t.equal((await post({ authreq: signExtJwt(base, device.sDb(epk)) })).status, 400, 'no epk')
  const nine = Object.fromEntries(Array.from({ length: 9 }, () => [randomPid(), 'A']))
  t.equal((await post({ epk, authreq: signExtJwt({ ...base, scope: nine }, device.sDb(epk)) })).status, 400, '9 scopes')
  const notPid = { ...base, scope: { abc: 'A' } }
  t.equal((await post({ epk, authreq: signExtJwt(notPid, device.sDb(epk)) })).status, 400, 'a scope key not a pid')
  const unknownKey = new TestDevice().eid
  t.match(await post({ epk: unknownKey, authreq: signExtJwt(base, device.sDb(unknownKey)) }), { status: 404 })
  const wrongMac = signExtJwt(base, new Uint8Array(32).fill(3))
  t.match(await post({ epk, authreq: wrongMac }), { status: 401, body: { error: 'bad_signature' } }, 'wrong key')
  const other = new TestDevice()
  const asOther = signExtJwt({ ...base, iss: other.eid }, device.sDb(epk))
  t.equal((await post({ epk, authreq: asOther })).status, 401, "another device's eid")
  for (const [what, claims] of [
    ['aud is not the epk', { ...base, aud: device.eid }],
    ['expired', { ...base, exp: now }],
    ['iat 31 s ahead', { ...base, iat: now + 31 }],
    ['living longer than a device asks', { ...base, exp: now + 3631 }],
  ] as const) {
    t.equal((await post({ epk, authreq: signExtJwt(claims, device.sDb(epk)) })).status, 401, what)
  }
  const ahead = await expectStatus(post({ epk, authreq: signExtJwt({ ...base, iat: now + 30 }, device.sDb(epk)) }), 200)
  t.equal(ahead.sentcnt, 0, 'iat 30 s ahead is taken; no targets, none sent')
  const strangers = await askApproval(broker, other, [pairing])
  t.equal(strangers.sentcnt, 0, "another device's request does not reach this device's pairing")
  const mine = await askApproval(broker, device, [pairing, { pid: randomPid(), aid: new TestApp().aid }])
  t.equal(mine.sentcnt, 1, 'only the active pairing is a target')
})

t.test('a replayed allow or a deny after it is refused; so is a MAC with the wrong key', async (t) => {
  const { broker, device, app, pid, pairing } = await paired(t)
  const { eventid } = await askApproval(broker, device, [pairing])
  const path = dataPath(eventid, pid)
  const data = await expectStatus(broker.call('GET', path), 200)
  const body = app.authreply(data, device.eid, pid, broker.clock.now)
  const stranger = new TestApp()
  const forged = { ...body, mac: Buffer.from(stranger.sAb(data.epk)).toString('base64') }
  t.match(await broker.call('POST', path, forged), { status: 401, body: { error: 'bad_mac' } }, 'a MAC, wrong key')
  const mismatched = app.authreply(data, device.eid, pid, broker.clock.now, 900, { jti: 'AAAA' })
  t.equal((await broker.call('POST', path, mismatched)).status, 400, 'an authreply for another jti')
  t.equal((await broker.call('POST', path, { mac: body.mac })).status, 400, 'no authreply')
  await expectStatus(broker.call('POST', path, body), 200)
  t.match(await broker.call('POST', path, body), { status: 410, body: { reason: 'answered' } }, 'a replayed authreply')
  t.equal((await broker.call('DELETE', path)).status, 410, 'no deny after the allow')
  t.equal((await broker.call('GET', path)).status, 410, 'the entry is answered')
  t.equal((await broker.call('DELETE', `/notify/event/${eventid}`)).status, 410, 'no withdrawal after it')
  const check = await expectStatus(broker.call('GET', `/notify/event/check/${eventid}`), 200)
  t.equal(check.authreply, body.authreply)
})

t.test('a wrong pid: unknown, or a pairing the event is not for', async (t) => {
  const { broker, device, app, pid, pairing } = await paired(t)
  const otherApp = new TestApp()
  const otherPid = await pair(broker, device, otherApp)
  const { eventid } = await askApproval(broker, device, [pairing])
  t.equal((await broker.call('GET', dataPath(eventid, randomPid()))).status, 404, 'an unknown pid')
  t.equal((await broker.call('GET', dataPath(eventid, otherPid))).status, 404, 'a pairing not targeted')
  t.equal((await broker.call('GET', `/notify/event/data/${eventid}/short`)).status, 404, 'a malformed pidx')
  const data = await expectStatus(broker.call('GET', dataPath(eventid, pid)), 200)
  const asOther = { authreply: 'a.b.c', mac: Buffer.alloc(32).toString('base64') }
  t.equal((await broker.call('POST', dataPath(eventid, otherPid), asOther)).status, 404, 'posting as another pid')
  t.equal((await broker.call('DELETE', dataPath(eventid, otherPid))).status, 404, 'denying as another pid')
  const inbox = await expectStatus(broker.call('POST', '/notify/event/data/allbypid', { pid: [otherPid] }), 200)
  t.same(inbox, { eventid: [] }, 'not offered to the other pairing')
  t.equal(app.open(data, device.eid), 'system:config')
})

t.test('an expired event: 404 to the app, 410 expired to the client, then forgotten', async (t) => {
  const { broker, device, app, pid, pairing } = await paired(t)
  const { eventid } = await askApproval(broker, device, [pairing])
  const path = dataPath(eventid, pid)
  const data = await expectStatus(broker.call('GET', path), 200)
  broker.clock.now = data.exp
  t.equal((await broker.call('GET', path)).status, 404, 'the entry expired')
  const body = app.authreply(data, device.eid, pid, broker.clock.now)
  t.equal((await broker.call('POST', path, body)).status, 404, 'no allow after exp')
  t.equal((await broker.call('DELETE', path)).status, 404, 'no deny after exp')
  const check = () => broker.call('GET', `/notify/event/check/${eventid}`)
  t.match(await check(), { status: 410, body: { reason: 'expired' } })
  t.match(await broker.call('DELETE', `/notify/event/${eventid}`), { status: 410, body: { reason: 'expired' } })
  t.same(await expectStatus(broker.call('POST', '/notify/event/data/allbypid', { pid: [pid] }), 200), { eventid: [] })
  broker.clock.now += 600
  t.equal((await check()).status, 404, 'forgotten 10 min later')
})

t.test('the client withdraws: the app sees it cancelled', async (t) => {
  const { broker, device, pid, pairing } = await paired(t)
  const { eventid } = await askApproval(broker, device, [pairing])
  t.same(await expectStatus(broker.call('DELETE', `/notify/event/${eventid}`), 200), { deleted: true })
  t.match(await broker.call('GET', `/notify/event/check/${eventid}`), { status: 410, body: { reason: 'withdrawn' } })
  t.match(await broker.call('GET', dataPath(eventid, pid)), { status: 410, body: { reason: 'cancelled' } })
  t.equal((await broker.call('DELETE', `/notify/event/${eventid}`)).status, 410, 'once')
  t.equal((await broker.call('GET', `/notify/event/check/${'2'.repeat(64)}`)).status, 404, 'an unknown event')
})

t.test('two instances racing on one event: the first answer wins, the other is told so', async (t) => {
  const { broker, device, app, pid, pairing } = await paired(t)
  const second = await broker.another()
  for (let round = 0; round < 5; round++) {
    const { eventid } = await askApproval(broker, device, [pairing])
    const path = dataPath(eventid, pid)
    const data = await expectStatus(second.call('GET', path), 200)
    const body = app.authreply(data, device.eid, pid, broker.clock.now)
    const [allowed, denied] = await Promise.all([broker.call('POST', path, body), second.call('DELETE', path)])
    t.same([allowed.status, denied.status].sort(), [200, 410], `round ${round}: one answer wins`)
    const check = await expectStatus(second.call('GET', `/notify/event/check/${eventid}`), 200)
    t.equal(check.deny === true, denied.status === 200, `round ${round}: the client sees the winner`)
  }
})

t.test('allbypid: at most 64 well-formed pids; unknown ones skipped', async (t) => {
  const { broker, device, pid, pairing } = await paired(t)
  const allbypid = (pids: unknown) => broker.call('POST', '/notify/event/data/allbypid', { pid: pids })
  t.equal((await allbypid(Array.from({ length: 65 }, randomPid))).status, 400, '65 pids')
  t.equal((await allbypid('abc')).status, 400, 'not an array')
  t.equal((await allbypid([pid, 'short'])).status, 400, 'a malformed pid')
  const { eventid } = await askApproval(broker, device, [pairing])
  const found = await expectStatus(allbypid([...Array.from({ length: 63 }, randomPid), pid]), 200)
  t.same(found, { eventid: { [eventid]: [pid] } })
})

t.test('event/new is limited per eid', async (t) => {
  const { broker, device, pairing } = await paired(t, { rates: { event: { limit: 2, windowSeconds: 60 } } })
  await askApproval(broker, device, [pairing])
  await askApproval(broker, device, [pairing])
  const { epk } = await expectStatus(broker.call('GET', '/notify/session'), 200)
  const third = await broker.call('POST', '/notify/event/new', device.request(epk, 'x', [pairing], broker.clock.now))
  t.match(third, { status: 429, body: { error: 'rate_limited' } })
  broker.clock.now += 60
  t.equal((await askApproval(broker, device, [pairing])).sentcnt, 1, 'the next minute')
})
