// A device's and an app's pairings at the broker (contract §3.4.7, §3.5.2): list and delete with the
// device's proof, delete with the app's, the push-token refresh, and each nonce good once.

import t from 'tap'
import { brokerUnderTest } from './helpers/notify-broker.js'
import { askApproval, expectStatus, pair } from './helpers/notify-flows.js'
import { TestApp, TestDevice } from './helpers/notify-parties.js'

t.test('the device lists and deletes its pairings; the app learns of the deletion', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const pid = await pair(broker, device, app)
  const kept = await pair(broker, device, new TestApp())
  await pair(broker, new TestDevice(), new TestApp())
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  const proof = () => ({ ...device.mac(epk, broker.clock.now), epk })
  const list = await expectStatus(broker.call('POST', '/notify/subscribers/list', proof()), 200)
  t.same(list.map((entry: { pid: string }) => entry.pid).sort(), [pid, kept].sort(), "only this device's")
  t.match(
    list.find((entry: { pid: string }) => entry.pid === pid),
    {
      label: 'Pixel 8 (Android)',
      kid: /^[0-9a-f]{32}$/,
      aid: app.aid,
      created: broker.clock.now,
    },
  )
  const { eventid } = await askApproval(broker, device, [{ pid, aid: app.aid }])
  const deleted = await expectStatus(broker.call('POST', '/notify/subscribers/delete', { ...proof(), pid }), 200)
  t.same(deleted, { deleted: pid })
  t.equal((await broker.call('POST', '/notify/subscribers/delete', { ...proof(), pid })).status, 404, 'once')
  const after = await expectStatus(broker.call('POST', '/notify/subscribers/list', proof()), 200)
  t.same(
    after.map((entry: { pid: string }) => entry.pid),
    [kept],
  )
  const inbox = await expectStatus(broker.call('POST', '/notify/event/data/allbypid', { pid: [pid, kept] }), 200)
  t.same(inbox, { eventid: [], pairing: { [pid]: 'DELETED' } }, `the app is told; event ${eventid} is not offered`)
  t.equal((await askApproval(broker, device, [{ pid, aid: app.aid }])).sentcnt, 0, 'no longer a target')
  const other = new TestDevice()
  const otherEpk = (await expectStatus(broker.call('POST', '/notify/session', { eid: other.eid }), 200)).epk
  const foreign = { ...other.mac(otherEpk, broker.clock.now), epk: otherEpk, pid: kept }
  t.equal((await broker.call('POST', '/notify/subscribers/delete', foreign)).status, 404, "not another device's")
})

t.test('the device proof: right key, right MAC, a nonce of the last 5 minutes, once', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  const list = (body: unknown) => broker.call('POST', '/notify/subscribers/list', body)
  const proof = { ...device.mac(epk, broker.clock.now), epk }
  t.same(await expectStatus(list(proof), 200), [], 'no pairings: an empty array')
  t.match(await list(proof), { status: 401, body: { error: 'nonce_replayed' } }, 'a replayed nonce')
  const second = await broker.another()
  t.equal((await second.call('POST', '/notify/subscribers/list', proof)).status, 401, 'on another instance too')
  const forged = { ...device.mac(epk, broker.clock.now), epk }
  forged.mac = device.mac(epk, broker.clock.now).mac
  t.match(await list(forged), { status: 401, body: { error: 'bad_mac' } }, "another nonce's MAC")
  const stale = { ...device.mac(epk, broker.clock.now - 301), epk }
  t.match(await list(stale), { status: 401, body: { error: 'stale_nonce' } }, 'a nonce 301 s old')
  const early = { ...device.mac(epk, broker.clock.now + 301), epk }
  t.equal((await list(early)).status, 401, 'a nonce 301 s ahead')
  t.equal((await list({ ...device.mac(epk, broker.clock.now - 300), epk })).status, 200, '300 s old is taken')
  t.equal((await list({ ...proof, nonce: 'abc' })).status, 400, 'a malformed nonce')
})

t.test('the app deletes its own pairing with its aid-bound key, once', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const pid = await pair(broker, device, app)
  const otherApp = new TestApp()
  const otherPid = await pair(broker, device, otherApp)
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { aid: app.aid }), 200)
  const del = (body: unknown) => broker.call('POST', '/notify/subscribers/delete', body)
  t.equal((await del(app.unpair(otherPid, epk))).status, 404, "not another app's pairing")
  const body = app.unpair(pid, epk)
  t.same(await expectStatus(del(body), 200), { deleted: pid })
  t.match(await del(body), { status: 401, body: { error: 'nonce_replayed' } }, 'a replayed proof')
  t.equal((await del({ ...app.unpair(pid, epk), mac: body.mac })).status, 401, 'a MAC of another nonce')
  const inbox = await expectStatus(broker.call('POST', '/notify/event/data/allbypid', { pid: [pid] }), 200)
  t.same(inbox, { eventid: [] }, 'the app knows already: no DELETED mark')
  const session = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  t.equal(session.paired, true, 'the other pairing stays')
})

t.test('the push token refresh: proved with the aid-bound key of today or yesterday, once', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const pid = await pair(broker, device, app)
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { aid: app.aid }), 200)
  const token = (body: unknown) => broker.call('POST', '/notify/subscribers/token', body)
  const body = app.token(pid, epk, 'fcm-new')
  t.same(await expectStatus(token(body), 200), { status: 'updated' })
  t.equal((await token(body)).status, 401, 'a replayed proof')
  t.equal((await token({ ...app.token(pid, epk, 'fcm-x'), fid: 'fcm-y' })).status, 401, 'the MAC covers the fid')
  t.equal((await token(new TestApp().token(pid, epk, 'fcm'))).status, 401, "another app's key")
  broker.clock.now += 86_400
  t.equal((await token(app.token(pid, epk, 'fcm-2'))).status, 200, "yesterday's key")
  broker.clock.now += 86_400
  t.equal((await token(app.token(pid, epk, 'fcm-3'))).status, 401, 'not the day after')
  const fresh = (await expectStatus(broker.call('POST', '/notify/session', { aid: app.aid }), 200)).epk
  t.equal((await token(app.token(randomPidOf(pid), fresh, 'fcm'))).status, 404, 'no such pairing of this aid')
})

/** A pid that is not `pid`. */
function randomPidOf(pid: string): string {
  const bytes = Buffer.from(pid, 'base64')
  bytes[0] = bytes[0]! ^ 1
  return bytes.toString('base64')
}
