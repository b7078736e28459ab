// The key store's own check of a crypto operation's scope (crypto-contract §0, §3): exactly
// `keymgmt:use:<kid>` of the body's KID, before anything is found malformed, so a body without a
// readable KID is a 403; and an error the operation did not expect is a bug, not a client's 406.
import t from 'tap'
import { hmac } from '../actors/keystore/crypto-hmac.js'
import { cryptoOperation } from '../actors/keystore/crypto-operation.js'
import { deriveKey } from '../actors/keystore/derive-key.js'
import { createKey, getKey } from '../actors/keystore/key-management.js'
import { CryptoInputError, nativeEngine } from '../hal/index.js'
import { LogType } from '../protocol/journal.js'
import { testKeystore } from './helpers/keystore-context.js'

t.test('the scope is compared exactly, the KID in the lower case the device emits', async (t) => {
  const ks = await testKeystore(t)
  const made = await createKey(ks.actor, ks.req('keymgmt:gen', { label: 'h', type: 'SHA2-256' }))
  const kid = (made.body as { kid: string }).kid
  const mac = (scope: string, bodyKid: string) =>
    cryptoOperation(ks.actor, ks.raw(scope, { kid: bodyKid, msg: 'aGk=' }), hmac.hash)
  t.equal((await mac(`keymgmt:use:${kid}`, kid)).status, 200, 'the exact scope')
  t.equal((await mac(`keymgmt:use:${kid}`, kid.toUpperCase())).status, 200, 'the body may name the KID in any case')
  t.equal((await mac(`keymgmt:use:${kid.toUpperCase()}`, kid)).status, 403, 'a scope with the KID in upper case')
  t.equal((await mac(`KEYMGMT:USE:${kid}`, kid)).status, 403, 'a scope in upper case')
  t.equal((await mac(`keymgmt:use:${kid}:x`, kid)).status, 403, 'a longer scope')
  const get = (scope: string) => getKey(ks.actor, { ...ks.req(scope, undefined), params: { kid } })
  t.equal((await get(`keymgmt:use:${kid}`)).status, 200, 'get with the exact scope')
  t.equal((await get(`keymgmt:use:${kid.toUpperCase()}`)).status, 403, 'get: a scope with the KID in upper case')
  t.equal((await get('keymgmt:get')).status, 200, 'get: keymgmt:get reads any key')
  t.equal(ks.denials.length, 4, 'each refusal went through `denied` (FAILED_SCOPE_CHECK)')
})

t.test('a body without a readable KID: 403, as no use scope can match it; derive: 400', async (t) => {
  const ks = await testKeystore(t)
  const use = `keymgmt:use:${'ab'.repeat(16)}`
  for (const [what, body] of [
    ['not JSON', '{"kid": '],
    ['not an object', '[1]'],
    ['no kid', { msg: 'aGk=' }],
    ['a malformed kid', { kid: 'xyz', msg: 'aGk=' }],
  ] as const) {
    const answer = await cryptoOperation(ks.actor, ks.raw(use, body), hmac.hash)
    t.equal(answer.status, 403, `${what}: 403`)
  }
  t.equal(ks.denials.length, 4, 'each one a scope failure')
  t.same(
    ks.journaled.filter((e) => e.type === LogType.CRYPTO_HMAC_HASH),
    [],
    'and no operation record: the operation was not admitted',
  )
  const derived = await cryptoOperation(ks.actor, ks.raw('keymgmt:derive', '{"kid": '), deriveKey)
  t.equal(derived.status, 400, "derive's scope names no key: its unreadable body is malformed")
})

t.test('an engine error the operation does not expect propagates (a 500), not a 406', async (t) => {
  const boom = Buffer.from('boom')
  const engine = {
    ...nativeEngine,
    hmac: (digest: Parameters<typeof nativeEngine.hmac>[0], key: Uint8Array, message: Uint8Array) => {
      if (Buffer.from(message).equals(boom)) throw new CryptoInputError('a check the key store should have made')
      return nativeEngine.hmac(digest, key, message)
    },
  }
  const ks = await testKeystore(t, { engine })
  const made = await createKey(ks.actor, ks.req('keymgmt:gen', { label: 'h', type: 'SHA2-256' }))
  const kid = (made.body as { kid: string }).kid
  const mac = (msg: Buffer) =>
    cryptoOperation(ks.actor, ks.raw(`keymgmt:use:${kid}`, { kid, msg: msg.toString('base64') }), hmac.hash)
  t.equal((await mac(Buffer.from('fine'))).status, 200, 'the engine works')
  await t.rejects(mac(boom), CryptoInputError, 'the unexpected CryptoInputError is thrown to the service host')
})
