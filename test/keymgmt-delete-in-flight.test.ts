// A key is out of service from the moment its deletion may be journaled: crypto operations overlap
// a deletion, and none may answer 200 with a key whose KEY_DELETE is (or may soon be) in the journal.
// The journal holds the KEY_DELETE append until the test lets it go.
import t from 'tap'
import { hmac } from '../actors/keystore/crypto-hmac.js'
import { mldsa } from '../actors/keystore/crypto-mldsa.js'
import { cryptoOperation } from '../actors/keystore/crypto-operation.js'
import { createKey, deleteKey, getKey } from '../actors/keystore/key-management.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { testKeystore } from './helpers/keystore-context.js'

/** A journal gate: `held` resolves once a KEY_DELETE append waits, which `release` lets through (or `refuse` fails). */
function deleteGate() {
  let held!: () => void
  let open!: (err?: Error) => void
  const waiting = new Promise<void>((resolve) => (held = resolve))
  const gate = new Promise<Error | undefined>((resolve) => (open = resolve))
  return {
    held: waiting,
    release: () => open(),
    refuse: () => open(new Error('the journal is out of reach')),
    beforeAppend: async (entries: { type: number }[]) => {
      if (!entries.some((e) => e.type === LogType.KEY_DELETE)) return
      held()
      const err = await gate
      if (err) throw err
    },
  }
}

t.test('an operation during the journaling of a deletion: 406, never a 200 after KEY_DELETE', async (t) => {
  const gate = deleteGate()
  const ks = await testKeystore(t, { beforeAppend: gate.beforeAppend })
  const made = await createKey(ks.actor, ks.req('keymgmt:gen', { label: 'h', type: 'SHA2-256' }))
  const kid = (made.body as { kid: string }).kid
  const use = `keymgmt:use:${kid}`
  const mac = () => cryptoOperation(ks.actor, ks.raw(use, { kid, msg: 'aGVsbG8=' }), hmac.hash)
  t.equal((await mac()).status, 200, 'in service before the deletion')

  const deleting = deleteKey(ks.actor, { ...ks.req('keymgmt:del', undefined), params: { kid } })
  await gate.held
  t.ok(ks.actor.repository.has(kid), 'the repository still holds the key while KEY_DELETE is being written')
  t.match(await mac(), { status: 406, body: { error: 'key_not_found' } }, 'an HMAC meanwhile: 406')
  t.match(await getKey(ks.actor, { ...ks.req(use, undefined), params: { kid } }), { status: 404 }, 'get: 404')
  gate.release()
  t.equal((await deleting).status, 200, 'the deletion completes')
  t.notOk(ks.actor.repository.has(kid), 'gone')
  t.equal(ks.actor.keys.state(kid), undefined, 'its machine has ended')

  const hmacs = ks.journaled.filter((e) => e.type === LogType.CRYPTO_HMAC_HASH).map((e) => e.result)
  t.same(hmacs, [LogResult.OK, LogResult.FAILED], 'the HMAC records: OK before, FAILED during')
})

t.test('a deletion the journal refuses puts the key back in service', async (t) => {
  const gate = deleteGate()
  const ks = await testKeystore(t, { beforeAppend: gate.beforeAppend })
  const made = await createKey(ks.actor, ks.req('keymgmt:gen', { label: 'h', type: 'SHA3-256' }))
  const kid = (made.body as { kid: string }).kid
  const deleting = deleteKey(ks.actor, { ...ks.req('keymgmt:del', undefined), params: { kid } })
  await gate.held
  gate.refuse()
  await t.rejects(deleting, /out of reach/, 'the deletion fails with the journal')
  const again = await cryptoOperation(ks.actor, ks.raw(`keymgmt:use:${kid}`, { kid, msg: 'aGk=' }), hmac.hash)
  t.equal(again.status, 200, 'the key serves again')
  t.ok(ks.actor.repository.has(kid), 'and is still stored')
})

t.test("a deleted ML-DSA key's expanded secret key is wiped when it leaves service", async (t) => {
  const gate = deleteGate()
  const ks = await testKeystore(t, { beforeAppend: gate.beforeAppend })
  const made = await createKey(ks.actor, ks.req('keymgmt:gen', { label: 'd', type: 'MLDSA44' }))
  const kid = (made.body as { kid: string }).kid
  const signed = await cryptoOperation(ks.actor, ks.raw(`keymgmt:use:${kid}`, { kid, msg: 'aGk=' }), mldsa.sign)
  t.equal(signed.status, 200, 'signed: the expanded key is cached')
  const cached = ks.actor.expanded.get(kid, () => new Uint8Array(1))
  t.ok(cached.length > 1 && cached.some((b) => b !== 0), 'the cached expanded key')
  const deleting = deleteKey(ks.actor, { ...ks.req('keymgmt:del', undefined), params: { kid } })
  await gate.held
  t.ok(
    cached.every((b) => b === 0),
    'wiped before KEY_DELETE is written',
  )
  gate.release()
  t.equal((await deleting).status, 200)
})
