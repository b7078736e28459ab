// The authenticator's builders against the family's known answers, byte for byte: test/vectors/ext-auth-v1.json is
// encedo/encedo-authenticator tests/vectors/v1.json (its `origin` names the commit), copied from the contract's
// vectors (/work/shared/spec/vectors). The derivations are check-ext-auth-vectors.mjs's.
import { readFileSync } from 'node:fs'
import t from 'tap'
import {
  buildAuthreply,
  buildPairingReply,
  grantedScope,
  isPeriod,
  openEvent,
  pushTokenBody,
  readEventData,
  readPairingRequest,
  signedBy,
  signExtJwt,
  unpairBody,
  type ApprovalKeys,
} from './helpers/authenticator-vectors.js'

const V = JSON.parse(readFileSync(new URL('vectors/ext-auth-v1.json', import.meta.url), 'utf8')).vectors
const b64d = (text: string) => new Uint8Array(Buffer.from(text, 'base64'))

t.test('pairing: the reply, its mac and the post body', async (t) => {
  const { inputs, derived, expected } = V.pairing
  const payload = inputs.request_payload
  // A request as a device sends it, signed with a key the authenticator cannot know (it reads it unverified).
  const request = signExtJwt(payload, new Uint8Array(32).fill(7))
  const read = readPairingRequest(request, payload.eat - 1)
  const reply = buildPairingReply(read, b64d(inputs.aid_seed), inputs.label, inputs.fid)
  t.equal(Buffer.from(reply.aidPrv).toString('base64'), derived.aid_prv, 'aid_prv is the clamped seed')
  t.equal(reply.body.reply, expected.reply)
  t.equal(reply.body.mac, expected.mac)
  t.same(reply.body, expected.post_body)
  t.equal(JSON.stringify(reply.body), JSON.stringify(expected.post_body), 'the body keys in the vector order')
})

for (const event of V.events) {
  t.test(`event "${event.name}": opening, and the allow reply`, async (t) => {
    const { inputs, expected } = event
    const keys: ApprovalKeys = {
      aidPrv: b64d(inputs.aid_prv),
      aid: b64d(inputs.aid),
      eid: b64d(inputs.eid),
      pid: inputs.pid,
    }
    const data = readEventData(inputs.event)
    if (!data) throw new Error('the vector event does not read')
    const opened = openEvent(data, keys, inputs.now)
    if (!expected.mac_valid) return void t.equal(opened, undefined, 'a bad tag is refused silently')
    if (!opened) throw new Error('the vector event does not open')
    t.equal(opened.scope, expected.scope)
    const scope = grantedScope(opened, inputs.writable)
    t.equal(scope, expected.reply.scope_sent)
    const period = inputs.period_min * 60
    if (!isPeriod(period)) throw new Error(`period ${period}`)
    const answer = buildAuthreply(opened, keys, { scope, period, now: inputs.now })
    t.equal(answer.authreply, expected.reply.authreply)
    t.equal(answer.mac, expected.reply.mac)
    t.ok(signedBy(answer.authreply, keys), "the device's check of the authreply holds")
  })
}

t.test('the key hint of a keymgmt:use scope is read', async (t) => {
  const [event] = V.events
  const keys = {
    aidPrv: b64d(event.inputs.aid_prv),
    aid: b64d(event.inputs.aid),
    eid: b64d(event.inputs.eid),
    pid: 'p',
  }
  const opened = openEvent(readEventData(event.inputs.event)!, keys, event.inputs.now)
  t.same(opened?.key, { type: '0221', label: 'PGP main' })
  t.equal(opened?.writeSwitch, false)
})

t.test('an event past its exp is not opened', async (t) => {
  const [event] = V.events
  const keys = {
    aidPrv: b64d(event.inputs.aid_prv),
    aid: b64d(event.inputs.aid),
    eid: b64d(event.inputs.eid),
    pid: 'p',
  }
  const data = readEventData(event.inputs.event)!
  t.ok(openEvent(data, keys, data.exp), 'good until its exp')
  t.equal(openEvent(data, keys, data.exp + 1), undefined)
})

t.test('unpair and push-token bodies', async (t) => {
  const { inputs, expected } = V.unpair
  const proof = {
    pid: inputs.pid,
    aid: b64d(inputs.aid),
    aidPrv: b64d(inputs.aid_prv),
    epk: b64d(inputs.epk),
    nonce: b64d(inputs.nonce),
  }
  const body = unpairBody(proof)
  t.same(body, expected.post_body)
  t.equal(JSON.stringify(body), JSON.stringify(expected.post_body), 'the body keys in the vector order')
  const refresh = V.token_refresh
  const token = pushTokenBody({ ...proof, nonce: b64d(refresh.inputs.nonce), fid: refresh.inputs.fid })
  t.equal(token.mac, refresh.expected.mac)
  t.same(token, {
    pid: inputs.pid,
    aid: inputs.aid,
    fid: refresh.inputs.fid,
    nonce: refresh.inputs.nonce,
    mac: token.mac,
  })
})

t.test("a real device's authreq entry opens (test/vectors/ext-authreq-device.json, from [C])", async (t) => {
  const D = JSON.parse(readFileSync(new URL('vectors/ext-authreq-device.json', import.meta.url), 'utf8'))
  const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))
  const claims = JSON.parse(Buffer.from(D.EXT_FX_AUTHREQ.split('.')[1], 'base64url').toString('utf8'))
  const keys = {
    aidPrv: hex(D.EXT_FX_IDENTITY_PRIV_HEX),
    aid: hex(D.EXT_FX_IDENTITY_PUB_HEX),
    eid: hex(D.EXT_FX_EID_HEX),
    pid: D.EXT_FX_PID_B64,
  }
  // The broker gives each phone its own entry with the authreq's jti, aud and exp (§3.5.2).
  const data = readEventData({
    jti: claims.jti,
    scope: claims.scope[D.EXT_FX_PID_B64],
    epk: claims.aud,
    exp: claims.exp,
  })
  const opened = openEvent(data!, keys, claims.iat)
  t.equal(opened?.scope, D.EXT_FX_SCOPE)
})
