// Pairing through the broker (contract §3.4.2–§3.4.4, §3.5.1): each check of register/init, the link
// and finalise, refusal, expiry, the per-eid rate limit and the test mode's pending list.

import t from 'tap'
import { signExtJwt } from '../protocol/index.js'
import { brokerUnderTest } from './helpers/notify-broker.js'
import { beginPairing, expectStatus } from './helpers/notify-flows.js'
import { TestApp, TestDevice } from './helpers/notify-parties.js'

t.test('register/init refuses what is not this device signing for this key', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const now = broker.clock.now
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  const init = (request: string) => broker.call('POST', '/notify/register/init', { epk, eid: device.eid, request })
  const claims = { jti: 'abcd', exp: now + 86_400, aud: epk, iss: device.eid }
  t.equal((await init('not.a.jwt')).status, 400, 'a malformed request')
  t.equal((await broker.call('POST', '/notify/register/init', { epk, eid: device.eid })).status, 400, 'no request')
  const wrongKey = signExtJwt(claims, new Uint8Array(32).fill(1))
  t.match(await init(wrongKey), { status: 401, body: { error: 'bad_signature' } }, 'a MAC made with the wrong key')
  const expired = signExtJwt({ ...claims, exp: now }, device.sDb(epk))
  t.match(await init(expired), { status: 401, body: { error: 'expired' } }, 'an expired request')
  const otherAud = signExtJwt({ ...claims, aud: device.eid }, device.sDb(epk))
  t.match(await init(otherAud), { status: 401, body: { error: 'bad_claims' } }, 'aud is not the epk')
  const otherIss = signExtJwt({ ...claims, iss: new TestDevice().eid }, device.sDb(epk))
  t.match(await init(otherIss), { status: 401, body: { error: 'bad_claims' } }, "another device's eid as iss")
  const short = await expectStatus(init(device.init(epk, now, now + 100).request), 200)
  t.equal(short.exp, now + 100, 'a registration lives no longer than its request')
})

t.test('the link: answered once, with a proof of the aid, for this request only', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const { rid, path, request } = await beginPairing(broker, device)
  const other = await beginPairing(broker, device)
  const forgedMac = { ...app.reply(request), aid: new TestApp().aid }
  t.match(await broker.call('POST', path, forgedMac), { status: 401, body: { error: 'bad_mac' } }, 'mac of another aid')
  const wrongFid = { ...app.reply(request), fid: 'other' }
  t.equal((await broker.call('POST', path, wrongFid)).status, 401, 'the mac covers the fid')
  const elsewhere = app.reply(other.request)
  t.match(await broker.call('POST', path, elsewhere), { status: 400, body: { error: 'bad_reply' } }, 'another jti')
  t.equal((await broker.call('POST', path, { ...app.reply(request), aid: 'x' })).status, 400, 'a malformed aid')
  await expectStatus(broker.call('POST', path, app.reply(request)), 200)
  const replayed = await broker.call('POST', path, app.reply(request))
  t.match(replayed, { status: 409, body: { error: 'already_answered' } }, 'a replayed reply')
  t.match(await broker.call('GET', path), { status: 410, body: { reason: 'answered' } }, 'the link is spent')
  t.equal((await broker.call('DELETE', path)).status, 409, 'an answered registration is not refused')
  t.equal((await broker.call('GET', `/notify/register/challenge/${'0'.repeat(64)}`)).status, 404, 'unknown rid')
  t.equal((await broker.call('GET', '/notify/register/challenge/xyz')).status, 404, 'malformed rid')
  t.equal((await broker.call('GET', `/notify/register/check/${rid}`)).status, 200)
})

t.test('finalise: only after the reply, only with the code of that reply; a repeat is the same 200', async (t) => {
  const warnings: string[] = []
  const broker = await brokerUnderTest(t, { warn: (message) => warnings.push(message) })
  const device = new TestDevice()
  const app = new TestApp()
  const { rid, path, request } = await beginPairing(broker, device)
  const finalise = (body: unknown) => broker.call('POST', `/notify/register/finalise/${rid}`, body)
  const code = Buffer.alloc(32).toString('base64')
  t.equal((await finalise({ kid: 'a'.repeat(32), code })).status, 409, 'the phone has not replied')
  t.equal((await finalise({ kid: 'A'.repeat(32), code })).status, 400, 'a malformed kid')
  t.equal((await finalise({ kid: 'a'.repeat(32) })).status, 400, 'no code')
  const { pid } = await expectStatus(broker.call('POST', path, app.reply(request)), 200)
  const { reply } = await expectStatus(broker.call('GET', `/notify/register/check/${rid}`), 200)
  const answer = device.validate(reply)
  t.match(await finalise({ ...answer, code }), { status: 401, body: { error: 'bad_code' } }, 'a wrong code')
  t.same(await expectStatus(finalise(answer), 200), { pid, status: 'paired' })
  t.same(await expectStatus(finalise(answer), 200), { pid, status: 'paired' }, 'a repeat')
  t.equal((await finalise({ ...answer, code })).status, 401, 'a repeat with another code')
  t.same(await expectStatus(broker.call('GET', `/notify/register/check/${rid}`), 200), { pid, status: 'paired' })
  t.same(warnings, [], 'the right kid: no warning')
  const second = await beginPairing(broker, device)
  await expectStatus(broker.call('POST', second.path, new TestApp().reply(second.request)), 200)
  const { reply: reply2 } = await expectStatus(broker.call('GET', `/notify/register/check/${second.rid}`), 200)
  const odd = { ...device.validate(reply2), kid: 'b'.repeat(32) }
  await expectStatus(broker.call('POST', `/notify/register/finalise/${second.rid}`, odd), 200)
  t.match(warnings, [/not the KID/], "a kid that is not the aid's is recorded with a warning")
  t.equal((await broker.call('POST', `/notify/register/finalise/${'1'.repeat(64)}`, answer)).status, 404)
})

t.test('refused by the phone, expired, then forgotten', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const refused = await beginPairing(broker, device)
  t.same(await expectStatus(broker.call('DELETE', refused.path), 200), { status: 'refused' })
  const check = (rid: string) => broker.call('GET', `/notify/register/check/${rid}`)
  t.match(await check(refused.rid), { status: 410, body: { reason: 'refused' } })
  t.equal((await broker.call('POST', refused.path, app.reply(refused.request))).status, 409, 'no answer after it')
  const late = await beginPairing(broker, device)
  const answered = await beginPairing(broker, device)
  await expectStatus(broker.call('POST', answered.path, app.reply(answered.request)), 200)
  const { reply } = await expectStatus(check(answered.rid), 200)
  broker.clock.now += 600
  t.match(await check(late.rid), { status: 410, body: { reason: 'expired' } }, 'unanswered past 10 min')
  t.match(await check(answered.rid), { status: 410, body: { reason: 'expired' } }, 'unfinalised past 10 min')
  t.equal((await broker.call('GET', late.path)).status, 404, 'the link expired')
  t.equal((await broker.call('POST', late.path, app.reply(late.request))).status, 404, 'no answer to it')
  const late404 = await broker.call('POST', `/notify/register/finalise/${answered.rid}`, device.validate(reply))
  t.equal(late404.status, 404, 'a late finalise, even with the right code')
  const unanswered = await broker.call('POST', `/notify/register/finalise/${late.rid}`, device.validate(reply))
  t.equal(unanswered.status, 404, 'an expired registration is unknown before it is unanswered')
  t.same(await expectStatus(broker.call('GET', '/notify/register/pending'), 200), [], 'nothing pending')
  broker.clock.now += 600
  t.equal((await check(late.rid)).status, 404, 'forgotten 10 min later')
  t.equal((await check(refused.rid)).status, 404)
})

t.test('register/init is limited per eid, after the device proved itself', async (t) => {
  const broker = await brokerUnderTest(t, { rates: { register: { limit: 2, windowSeconds: 600 } } })
  const device = new TestDevice()
  await beginPairing(broker, device)
  await beginPairing(broker, device)
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  const init = () => broker.call('POST', '/notify/register/init', { epk, ...device.init(epk, broker.clock.now) })
  t.match(await init(), { status: 429, body: { error: 'rate_limited' } }, 'the third in a window')
  const forged = { epk, eid: device.eid, request: signExtJwt({}, new Uint8Array(32).fill(2)) }
  t.equal((await broker.call('POST', '/notify/register/init', forged)).status, 401, 'an unproved one is not counted')
  await beginPairing(broker, new TestDevice())
  t.pass('another device is not held')
  broker.clock.now += 600
  t.equal((await init()).status, 200, 'the next window')
})

t.test('the pending list answers only in test mode', async (t) => {
  const broker = await brokerUnderTest(t, { testMode: false })
  await beginPairing(broker, new TestDevice())
  t.equal((await broker.call('GET', '/notify/register/pending')).status, 404)
})
