// The broker end to end (contract §0 sequences A and B): pairing, an approval, a denial, and what the
// buckets hold afterwards (an attacker reading them learns no scope and finds no key that opens one).

import t from 'tap'
import { decodeBase64, encodeBase64, openScope, scopeKey, x25519Agree } from '../protocol/index.js'
import { NotifyRefusal } from '../cloud/notify/notify-refusal.js'
import { brokerUnderTest, MASTER } from './helpers/notify-broker.js'
import { dataPath, expectStatus } from './helpers/notify-flows.js'
import { TestApp, TestDevice } from './helpers/notify-parties.js'

const SCOPE = 'system:config'

t.test('pairing, an approval then a denial, through every route in order', async (t) => {
  const broker = await brokerUnderTest(t)
  const device = new TestDevice()
  const app = new TestApp()
  const session = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  t.equal(session.paired, false, 'not paired yet')
  const { request } = device.init(session.epk, broker.clock.now)
  const init = await expectStatus(
    broker.call('POST', '/notify/register/init', { epk: session.epk, eid: device.eid, request }),
    200,
  )
  t.match(init, { rid: /^[0-9a-f]{64}$/, link: `https://api.encedo.com/notify/register/challenge/${init.rid}` })
  t.equal(init.exp, broker.clock.now + 600, 'a registration waits 10 min at most')
  const pending = await expectStatus(broker.call('GET', '/notify/register/pending'), 200)
  t.same(pending, [{ rid: init.rid, link: init.link, eid: device.eid, exp: init.exp }], 'the harness finds it')
  t.same(await expectStatus(broker.call('GET', `/notify/register/check/${init.rid}`), 202), { status: 'pending' })

  const path = new URL(init.link).pathname
  const challenge = await expectStatus(broker.call('GET', path), 200)
  t.same(challenge, { request, ipinfo_eid: { city: '', country: '', ip: '192.0.2.10' } })
  const answered = await expectStatus(broker.call('POST', path, app.reply(challenge.request)), 200)
  t.equal(decodeBase64(answered.pid)?.length, 32, 'a 256-bit pid')
  t.equal(answered.url, 'https://api.encedo.com/notify/event/')
  const checked = await expectStatus(broker.call('GET', `/notify/register/check/${init.rid}`), 200)
  t.equal(checked.pid, answered.pid)
  const finalised = await expectStatus(
    broker.call('POST', `/notify/register/finalise/${init.rid}`, device.validate(checked.reply)),
    200,
  )
  t.same(finalised, { pid: answered.pid, status: 'paired' })
  const again = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  t.equal(again.paired, true, 'paired once finalised')
  t.equal(again.epk, session.epk, 'the same key within a day')

  const pairing = { pid: answered.pid as string, aid: app.aid }
  for (const [decision, expected] of [
    ['allow', { pid: pairing.pid }],
    ['deny', { deny: true, pid: pairing.pid }],
  ] as const) {
    const { epk } = await expectStatus(broker.call('GET', '/notify/session'), 200)
    const posted = device.request(epk, SCOPE, [pairing], broker.clock.now)
    const event = await expectStatus(broker.call('POST', '/notify/event/new', posted), 200)
    t.match(event, { eventid: /^[0-9a-f]{64}$/, sentcnt: 1, ipinfo_you: { ip: '192.0.2.10' } }, decision)
    t.same(await expectStatus(broker.call('GET', `/notify/event/check/${event.eventid}`), 202), { status: 'pending' })
    const inbox = await expectStatus(broker.call('POST', '/notify/event/data/allbypid', { pid: [pairing.pid] }), 200)
    t.same(inbox, { eventid: { [event.eventid]: [pairing.pid] } }, 'the app finds the event')
    const data = await expectStatus(broker.call('GET', dataPath(event.eventid, pairing.pid)), 200)
    t.equal(app.open(data, device.eid), SCOPE, 'the app opens its entry')
    t.equal(data.epk, epk)
    if (decision === 'allow') {
      const body = app.authreply(data, device.eid, pairing.pid, broker.clock.now)
      t.same(await expectStatus(broker.call('POST', dataPath(event.eventid, pairing.pid), body), 200), {
        status: 'posted',
      })
      const result = await expectStatus(broker.call('GET', `/notify/event/check/${event.eventid}`), 200)
      t.same(result, { ...expected, authreply: body.authreply }, 'the client gets the authreply verbatim')
    } else {
      const denied = await expectStatus(broker.call('DELETE', dataPath(event.eventid, pairing.pid)), 200)
      t.same(denied, { status: 'denied' })
      const result = await expectStatus(broker.call('GET', `/notify/event/check/${event.eventid}`), 200)
      t.same(result, expected, 'a denial carries no authreply')
    }
    const after = await expectStatus(broker.call('POST', '/notify/event/data/allbypid', { pid: [pairing.pid] }), 200)
    t.same(after, { eventid: [] }, 'an answered event is no longer offered')
  }

  const raw = await broker.rawBuckets()
  const dump = [...raw.values()].flatMap((values) => [...values].flat()).join('\n')
  t.ok(raw.size >= 5 && dump.includes('"jti":"'), 'the buckets are read')
  t.notOk(dump.includes(SCOPE), 'no bucket holds the scope in clear')
  const secrets = {
    master: MASTER,
    sPair: app.sPair(device.eid),
    sDb: device.sDb(session.epk),
    sAb: app.sAb(session.epk),
    eidPrv: device.eidPrv,
    aidPrv: app.aidPrv,
  }
  for (const [name, secret] of Object.entries(secrets)) {
    const forms = [encodeBase64(secret), Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('base64url')]
    t.notOk(
      forms.some((form) => dump.includes(form)),
      `no bucket holds ${name}`,
    )
  }
  t.notOk(dump.includes(checked.reply), 'the pairing reply is dropped once handed on')
  // Every 32-byte value in the buckets, tried as S_pair and as the scope key K, opens no sealed entry.
  const entries = [...dump.matchAll(/A[A-Za-z0-9+/]{40,}={0,2}/g)].map((m) => m[0])
  t.ok(entries.length > 0, 'the sealed entries are there')
  const candidates = [...dump.matchAll(/[A-Za-z0-9+/_-]{43}=?/g)]
    .map((m) => decodeBase64(m[0]))
    .filter((b): b is Uint8Array => b?.length === 32)
  const jtis = [...dump.matchAll(/"jti":"([^"]+)"/g)].map((m) => decodeBase64(m[1]!)!)
  t.ok(candidates.length > 0 && jtis.length > 0, 'the keys, ids and jtis are there')
  let opened = 0
  for (const entry of entries) {
    for (const key of candidates) {
      for (const jti of jtis) {
        if (openScope(entry, key, jti) !== undefined) opened++
        if (openScope(entry, scopeKey(key, jti), jti) !== undefined) opened++
        try {
          if (openScope(entry, x25519Agree(key, decodeBase64(device.eid)!), jti) !== undefined) opened++
        } catch {
          // a value that is no usable private key
        }
      }
    }
  }
  t.equal(opened, 0, 'no value in the buckets opens a scope')
})

t.test('a refusal names no secret', async (t) => {
  const refusal = new NotifyRefusal(401, 'bad_mac', 'mac does not prove this aid')
  t.same(refusal.reply(), { status: 401, body: { error: 'bad_mac', message: 'mac does not prove this aid' } })
})
