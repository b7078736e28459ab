// The client library's external-authenticator calls on the device (ext-auth-contract §1) against a
// server in the device's place: the exact requests (path, body, which scope's token or none), the
// inputs refused before anything is sent, and answers not in the contract's shape refused on arrival.
import t from 'tap'
import {
  ExtInputError,
  ForbiddenError,
  NotAcceptableError,
  UnauthorizedError,
  UnexpectedAnswerError,
} from '../client/index.js'
import { extValues, key32 } from './helpers/ext-owner-fakes.js'
import { type Answer, recordingClient, type Seen } from './helpers/recording-device.js'

const v = extValues()

/** The device's answers of the contract, by route. */
function contract({ path }: Seen): Answer {
  if (path === '/api/auth/ext/init') return { status: 200, body: { request: v.request, eid: v.eid } }
  if (path === '/api/auth/ext/validate') return { status: 200, body: { kid: v.kid, code: v.code } }
  if (path === '/api/auth/ext/mac') return { status: 200, body: { nonce: key32(), mac: key32(), eid: v.eid } }
  if (path === '/api/auth/ext/request') return { status: 200, body: { authreq: v.authreq, epk: v.epk } }
  if (path === '/api/auth/ext/token') return { status: 200, body: { token: 'h.p.s' } }
  if (path === '/api/system/config') return { status: 200, body: { eid: v.eid, user: 'Ada', email: 'a@b.c' } }
  return { status: 404 }
}

t.test(
  'each call sends its route, body and token: auth:ext:pair for pairing and proofs, none for approvals',
  async (t) => {
    const { seen, client } = await recordingClient(t, contract)
    t.same(await client.pairingIdentity(), { eid: v.eid, user: 'Ada', email: 'a@b.c', hostname: '' })
    t.same(await client.extInit(v.epk), { request: v.request, eid: v.eid })
    t.same(await client.extValidate(v.pid, v.reply), { kid: v.kid, code: v.code })
    t.match(await client.extMac(v.epk), { eid: v.eid })
    t.same(await client.extRequest({ epk: v.epk, scope: 'keymgmt:use:' + v.kid, exp: 1e9, ctx: 'c', note: 'n' }), {
      authreq: v.authreq,
      epk: v.epk,
    })
    t.same(await client.extToken(v.authreply), { token: 'h.p.s' })
    t.same(
      seen.map(({ method, path, token, body }) => ({ method, path, token, body })),
      [
        { method: 'GET', path: '/api/system/config', token: 'auth:ext:pair', body: {} },
        { method: 'POST', path: '/api/auth/ext/init', token: 'auth:ext:pair', body: { epk: v.epk } },
        {
          method: 'POST',
          path: '/api/auth/ext/validate',
          token: 'auth:ext:pair',
          body: { pid: v.pid, reply: v.reply },
        },
        { method: 'POST', path: '/api/auth/ext/mac', token: 'auth:ext:pair', body: { epk: v.epk } },
        {
          method: 'POST',
          path: '/api/auth/ext/request',
          token: undefined,
          body: { epk: v.epk, scope: 'keymgmt:use:' + v.kid, exp: 1e9, ctx: 'c', note: 'n' },
        },
        { method: 'POST', path: '/api/auth/ext/token', token: undefined, body: { authreply: v.authreply } },
      ],
    )
  },
)

t.test('inputs the device would refuse as malformed are refused before anything is sent', async (t) => {
  const { seen, client } = await recordingClient(t, contract)
  const epk = v.epk
  await t.rejects(client.extInit('AAAA'), ExtInputError)
  await t.rejects(client.extInit(Buffer.alloc(31).toString('base64')), { name: 'ExtInputError', message: /epk must/ })
  await t.rejects(client.extMac(`${epk}x`), ExtInputError)
  await t.rejects(client.extValidate('nope', v.reply), { message: /pid must be 32 bytes/ })
  await t.rejects(client.extValidate(v.pid, 'not.a.jwt'), { message: /reply is not an eJWT/ })
  await t.rejects(client.extRequest({ epk, scope: '' }), { message: /scope must be 1 to 1023 bytes/ })
  await t.rejects(client.extRequest({ epk, scope: 'é'.repeat(512) }), { message: /1023 bytes/ })
  await t.rejects(client.extRequest({ epk, scope: 's', ctx: 'x'.repeat(65) }), { message: /ctx must be 1 to 64/ })
  await t.rejects(client.extRequest({ epk, scope: 's', note: '' }), { message: /note must be 1 to 128/ })
  await t.rejects(client.extRequest({ epk, scope: 's', exp: 1.5 }), { message: /exp must be/ })
  await t.rejects(client.extToken(`${v.authreply}.x`), { message: /authreply is not an eJWT/ })
  t.same(seen, [])
})

t.test("the device's refusals are its typed errors", async (t) => {
  let answer: Answer = { status: 403, body: { error: 'forbidden' } }
  const { client } = await recordingClient(t, () => answer)
  await t.rejects(client.extInit(v.epk), ForbiddenError)
  answer = { status: 406, body: { error: 'not_acceptable' } }
  await t.rejects(client.extValidate(v.pid, v.reply), NotAcceptableError)
  answer = { status: 401, body: { error: 'unauthorized' } }
  await t.rejects(client.extToken(v.authreply), UnauthorizedError)
})

t.test('answers not in the shape of the contract are not believed', async (t) => {
  let answer: Answer = { status: 200 }
  const { client } = await recordingClient(t, () => answer)
  const malformed: [string, unknown, () => Promise<unknown>][] = [
    ['ext/init without eid', { request: v.request }, () => client.extInit(v.epk)],
    ['ext/init with a request that is no eJWT', { request: 'x', eid: v.eid }, () => client.extInit(v.epk)],
    [
      'ext/validate with a KID in capitals',
      { kid: v.kid.toUpperCase(), code: v.code },
      () => client.extValidate(v.pid, v.reply),
    ],
    ['ext/validate with a short code', { kid: v.kid, code: 'AAAA' }, () => client.extValidate(v.pid, v.reply)],
    ['ext/mac without nonce', { mac: key32(), eid: v.eid }, () => client.extMac(v.epk)],
    [
      'ext/request for another epk',
      { authreq: v.authreq, epk: key32() },
      () => client.extRequest({ epk: v.epk, scope: 's' }),
    ],
    ['ext/token without token', {}, () => client.extToken(v.authreply)],
    ['config without eid', { user: 'Ada' }, () => client.pairingIdentity()],
  ]
  for (const [what, body, call] of malformed) {
    answer = { status: 200, body }
    await t.rejects(call(), UnexpectedAnswerError, what)
  }
})

t.test(
  'pairings: every page of the EXTAID search, each descr read as its pid; one naming none is refused',
  async (t) => {
    const pairs = Array.from({ length: 16 }, () => extValues())
    let descr: (p: (typeof pairs)[number]) => string = (p) => p.descr
    const { seen, client } = await recordingClient(t, ({ body }) => {
      const offset = body.offset as number
      const list = pairs.slice(offset, offset + (body.limit as number)).map((p) => ({
        kid: p.kid,
        created: 7,
        updated: 7,
        type: 'ECDH,CURVE25519',
        label: 'phone',
        descr: descr(p),
      }))
      return { status: 200, body: { offset, total: 40, listed: list.length, list } }
    })
    const found = await client.extPairings()
    t.same(
      found,
      pairs.map((p) => ({ kid: p.kid, label: 'phone', pid: p.pid, created: 7 })),
    )
    t.same(
      seen.map(({ path, token, body }) => ({ path, token, body })),
      [0, 15].map((offset) => ({
        path: '/api/keymgmt/search',
        token: 'keymgmt:search',
        body: { descr: '^RVhUQUlE', offset, limit: 15 },
      })),
    )
    descr = () => Buffer.from('EXTAID').toString('base64')
    await t.rejects(client.extPairings(), { name: 'UnexpectedAnswerError', message: /names no pid/ })
  },
)
