// The family's two sequences through the broker (contract §0, A and B), step by step, for tests that
// start from a pairing or an open event.

import type { BrokerUnderTest } from './notify-broker.js'
import type { TestApp, TestDevice } from './notify-parties.js'

// An answer as JSON: a test reads the fields the contract names.
type Json = any

export async function expectStatus(what: Promise<{ status: number; body: unknown }>, status: number): Promise<Json> {
  const reply = await what
  if (reply.status !== status) {
    throw new Error(`expected ${status}, got ${reply.status}: ${JSON.stringify(reply.body)}`)
  }
  return reply.body as Json
}

/** Sequence A up to the phone's answer: `{rid, link, epk}` and the challenge path. */
export async function beginPairing(broker: BrokerUnderTest, device: TestDevice) {
  const { epk } = await expectStatus(broker.call('POST', '/notify/session', { eid: device.eid }), 200)
  const { request } = device.init(epk, broker.clock.now)
  const init = await expectStatus(broker.call('POST', '/notify/register/init', { epk, eid: device.eid, request }), 200)
  return { rid: init.rid as string, path: new URL(init.link as string).pathname, epk: epk as string, request }
}

/** Sequence A whole: the app answers, the device validates, the client finalises. The pid. */
export async function pair(broker: BrokerUnderTest, device: TestDevice, app: TestApp): Promise<string> {
  const { rid, path, request } = await beginPairing(broker, device)
  const { pid } = await expectStatus(broker.call('POST', path, app.reply(request)), 200)
  const { reply } = await expectStatus(broker.call('GET', `/notify/register/check/${rid}`), 200)
  await expectStatus(broker.call('POST', `/notify/register/finalise/${rid}`, device.validate(reply)), 200)
  return pid
}

/** Sequence B up to the event: the device asks `scope` of `pairings`. `{eventid, epk}`. */
export async function askApproval(
  broker: BrokerUnderTest,
  device: TestDevice,
  pairings: Array<{ pid: string; aid: string }>,
  scope = 'system:config',
) {
  const { epk } = await expectStatus(broker.call('GET', '/notify/session'), 200)
  const posted = device.request(epk, scope, pairings, broker.clock.now)
  const event = await expectStatus(broker.call('POST', '/notify/event/new', posted), 200)
  return { eventid: event.eventid as string, epk: epk as string, sentcnt: event.sentcnt as number, posted }
}

/** The path of a pid's entry of an event. */
export function dataPath(eventid: string, pid: string): string {
  return `/notify/event/data/${eventid}/${pid.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`
}
