// POST /api/keymgmt/update (crypto-contract §2): label and descr are replaced, so an absent or
// null `descr` clears it; `updated` = max(now, old + 1), also when the clock stands or goes back.
import { appendOnly } from './helpers/keystore-context.js'
import { KeyLifecycles } from '../actors/keystore/key-lifecycles.js'
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import t from 'tap'
import { createKey as create, getKey, importKey, searchKeys, updateKey } from '../actors/keystore/key-management.js'
import { KeyRepository } from '../actors/keystore/key-repository.js'
import type { KeystoreContext } from '../actors/keystore/keystore-context.js'
import { nativeEngine } from '../hal/index.js'
import { FileKeySlotMedia } from '../hal/sim/key-slot-media.js'
import { skippingClock } from './helpers/clock.js'
import type { CommandRequest } from '../protocol/bus-messages.js'
import { LogType } from '../protocol/journal.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { owned } from './helpers/owner.js'
import { testSealer } from './helpers/test-sealer.js'

t.test('update', async (t) => {
  // The device's wall clock, which the test can set back.
  const clock = skippingClock()
  const o = await owned(t, { boot: { clock } })
  const tokens = new Tokens(o.base)
  const km = (path: string) => `${o.https}/api/keymgmt/${path}`
  const gen = await tokens.get('keymgmt:gen')
  const get = await tokens.get('keymgmt:get')
  const upd = await tokens.get('keymgmt:upd')
  const descr = b64(Buffer.from('first description'))
  const kid = await createKey(o.https, gen, { label: 'first', type: 'MLDSA87', descr })
  const read = async () => (await api(km(`get/${kid}`), get)).json
  const update = (body: Record<string, unknown>) => api(km('update'), upd, { kid, ...body })

  await t.test('descr replaced, cleared when absent', async (t) => {
    const other = b64(Buffer.from('second description'))
    t.equal((await update({ label: 'second', descr: other })).status, 200)
    t.equal((await read()).descr, other)
    t.equal((await update({ label: 'third' })).status, 200)
    t.notOk('descr' in (await read()), 'an absent descr clears it')
    t.equal((await update({ label: 'fourth', descr })).status, 200)
    const listed = (await api(km('list'), await tokens.get('keymgmt:list'))).json.list[0]
    t.same([listed.label, listed.descr], ['fourth', descr], 'the list shows the new attributes')
    t.equal((await read()).pubkey.length, 3456, 'the ML-DSA-87 public key is kept')
  })

  await t.test('updated moves forward by at least a second, whatever the clock says', async (t) => {
    const before = (await read()).updated as number
    clock.advance(-3_600_000)
    const times: number[] = []
    for (const label of ['back 1', 'back 2', 'back 3']) {
      t.equal((await update({ label })).status, 200)
      times.push((await read()).updated)
    }
    t.same(times, [before + 1, before + 2, before + 3], 'old + 1 while the clock is behind')
    clock.advance(3_600_000)
    t.equal((await update({ label: 'now' })).status, 200)
    const now = (await read()).updated as number
    t.ok(now >= before + 4, 'then now, which is later')
    const changed = (await readJournal(o.device.dataDir)).records.filter(
      (r) => r.type === LogType.KEY_ATTRIBUTES_CHANGED && r.decoded?.kid === kid,
    )
    t.same(
      changed.slice(-4).map((r) => r.decoded?.at),
      [...times, now],
      'journaled with the same times',
    )
  })

  await t.test('bad updates: 400 or 404, nothing changed', async (t) => {
    const before = await read()
    t.equal((await update({ label: 'x'.repeat(33) })).status, 400, '33-char label')
    t.equal((await update({ label: '' })).status, 400, 'empty label')
    t.equal((await update({ label: 'ok', descr: b64(Buffer.alloc(65)) })).status, 400, 'descr of 65 bytes')
    t.equal((await update({ label: 'ok', descr: '***' })).status, 400, 'descr not base64')
    t.equal((await api(km('update'), upd, { kid: '1'.repeat(32), label: 'x' })).status, 404, 'unknown KID')
    t.same(await read(), before)
  })
})

t.test('JSON null counts as an absent field', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const km = (path: string) => `${o.https}/api/keymgmt/${path}`
  const gen = await tokens.get('keymgmt:gen')
  const get = await tokens.get('keymgmt:get')
  const kid = await createKey(o.https, gen, { label: 'nulls', type: 'SECP256R1', mode: null, descr: null })
  t.notOk('descr' in (await api(km(`get/${kid}`), get)).json, 'create: no descr')
  const list = await tokens.get('keymgmt:list')
  t.equal((await api(km('list'), list)).json.list[0].type, 'ATT,PKEY,ECDH,SECP256R1', 'create: mode null is ECDH')
  const upd = await tokens.get('keymgmt:upd')
  t.equal((await api(km('update'), upd, { kid, label: 'set', descr: b64(Buffer.from('d')) })).status, 200)
  t.equal((await api(km('update'), upd, { kid, label: 'cleared', descr: null })).status, 200)
  t.notOk('descr' in (await api(km(`get/${kid}`), get)).json, 'update: a null descr clears it')
  const search = await tokens.get('keymgmt:search')
  const found = await api(km('search'), search, { descr: b64(Buffer.from('d')), offset: null, limit: null })
  t.equal(found.status, 200, 'search: null offset and limit')
  const imp = await tokens.get('keymgmt:imp')
  const pubkey = (await api(km(`get/${kid}`), get)).json.pubkey
  await api(km(`delete/${kid}`), await tokens.get('keymgmt:del'), undefined, 'DELETE')
  const imported = await api(km('import'), imp, { label: 'peer', type: 'SECP256R1', pubkey, mode: null, descr: null })
  t.equal(imported.status, 200, 'import: null mode and descr')
})

t.test('the key store itself reads JSON null as absent', async (t) => {
  const media = new FileKeySlotMedia(t.testdir(), { slotCount: 8 })
  t.teardown(() => media.close())
  const repository = await KeyRepository.open({ media, sealer: testSealer(), devid: '0123456789abcdef' })
  const actor = {
    engine: nativeEngine,
    repository,
    keys: new KeyLifecycles(
      appendOnly(async () => undefined),
      repository,
    ),
    random: (n: number) => Uint8Array.from(randomBytes(n)),
    logger: pino({ level: 'silent' }),
    identityState: undefined,
    now: () => 1_700_000_000,
    publish: () => undefined,
    unavailable: () => undefined,
    journal: async () => undefined,
  } as unknown as KeystoreContext
  const principal = { sub: 'U', scope: 'keymgmt:gen' }
  const req = (body: Record<string, unknown>, scope = principal.scope): CommandRequest => ({
    rid: 'r',
    tls: true,
    principal: { ...principal, scope },
    body,
  })
  const made = await create(actor, req({ label: 'k', type: 'SECP384R1', mode: null, descr: null }))
  t.equal(made.status, 200)
  const kid = (made.body as { kid: string }).kid
  t.same(repository.get(kid)?.mode, 'ECDH', 'mode null: ECDH')
  t.notOk(repository.get(kid)?.descr, 'descr null: none')
  t.equal((await updateKey(actor, req({ kid, label: 'd', descr: 'ZA==' }))).status, 200)
  t.equal((await updateKey(actor, req({ kid, label: 'n', descr: null }))).status, 200)
  t.notOk(repository.get(kid)?.descr, 'update: descr null clears it')
  t.equal(repository.get(kid)?.updated, 1_700_000_002, 'updated moved on by a second each time')
  const got = await getKey(actor, { ...req({}, 'keymgmt:get'), params: { kid } })
  t.equal((got.body as { type: string }).type, 'SECP384R1')
  const found = await searchKeys(actor, req({ descr: 'ZA==', offset: null, limit: null }, 'keymgmt:search'))
  t.same(found, { status: 200, body: { offset: 0, total: 1, listed: 0, list: [] } }, 'search: offset and limit null')
  const pubkey = Buffer.from(repository.get(kid)!.publicKey!).toString('base64')
  const clash = await importKey(actor, req({ label: 'i', type: 'SECP384R1', pubkey, mode: null, descr: null }))
  t.equal(clash.status, 406, "import: nulls absent, and the device's own key clashes")
})
