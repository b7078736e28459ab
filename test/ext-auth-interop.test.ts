// The device with the project's own authenticator core (authenticator/, contract §4): a pairing and an approval
// with the write switch, the authenticator's messages built by its own functions and carried by the test as the
// broker would. Either side drifting from the contract fails here. The core computes with the web page's
// WebCrypto keys: the CLI's noble ones meet the device in hemctl-auth-e2e.test.ts.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import {
  buildAuthreply,
  buildPairingReply,
  grantedScope,
  openEvent,
  readEventData,
  readPairingRequest,
  WebCryptoKeys,
} from '../authenticator/index.js'
import { fromBase64, toBase64 } from '../protocol/index.js'
import { brokerKey, payloadOf, post } from './helpers/ext-phone.js'
import { login, owned } from './helpers/owner.js'

t.test('a pairing and an approval by the authenticator of contract §4', async (t) => {
  const { base } = await owned(t)
  const user = await login(base, 'auth:ext:pair')
  const now = () => Math.floor(Date.now() / 1000)
  const init = await post(base, 'init', { epk: brokerKey().epk }, user)
  const request = readPairingRequest(init.json.request, now())
  const provider = new WebCryptoKeys()
  const { key } = await provider.generate()
  const reply = await buildPairingReply(request, key, 'Web authenticator (tap)', 'none')
  const pid = toBase64(randomBytes(32))
  const paired = await post(base, 'validate', { pid, reply: reply.reply }, user)
  t.equal(paired.status, 200, 'the device takes its reply')

  const broker = brokerKey()
  const asked = await post(base, 'request', { epk: broker.epk, scope: 'storage:disk0', ctx: 'interop' })
  const claims = payloadOf(asked.json.authreq) as { jti: string; exp: number; scope: Record<string, string> }
  const event = readEventData({ jti: claims.jti, scope: claims.scope[pid], epk: broker.epk, exp: claims.exp })
  const keys = { aidKey: key, eid: fromBase64(init.json.eid), pid, cipher: provider }
  const opened = event && (await openEvent(event, keys, now()))
  if (!t.ok(opened, 'the authenticator opens its entry')) return
  t.equal(opened!.scope, 'storage:disk0')
  const answer = await buildAuthreply(opened!, keys, { scope: grantedScope(opened!, true), period: 900, now: now() })
  const token = await post(base, 'token', { authreply: answer.authreply })
  t.equal(token.status, 200, 'the device takes its authreply')
  const bearer = JSON.parse(Buffer.from(token.json.token.split('.')[1], 'base64url').toString())
  t.equal(bearer.scope, 'storage:disk0:rw', 'with the write switch on')
})
