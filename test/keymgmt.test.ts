// Key management (device contract §3, crypto-contract §1–2): create, list, get, delete, update, import,
// search. Every type's life is in keymgmt-key-types.test.ts, import's rules in keymgmt-import.test.ts.
import { createECDH, createHash, generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, bytesOf, createKey, Tokens } from './helpers/keys.js'
import { MASTER_PASS, login, owned } from './helpers/owner.js'

/** type, get `type`, public key bytes. */
const TYPES: [string, string, number | undefined][] = [
  ['AES128', 'ATT,AES128', undefined],
  ['AES192', 'ATT,AES192', undefined],
  ['AES256', 'ATT,AES256', undefined],
  ['CURVE25519', 'CURVE25519', 32],
  ['CURVE448', 'CURVE448', 56],
  ['ED25519', 'ED25519', 32],
  ['ED448', 'ED448', 57],
  ['SECP256R1', 'SECP256R1', 33],
  ['SECP384R1', 'SECP384R1', 49],
  ['SECP521R1', 'SECP521R1', 67],
  ['SECP256K1', 'SECP256K1', 33],
  ['SHA2-256', 'ATT,SHA2-256', undefined],
  ['SHA2-384', 'ATT,SHA2-384', undefined],
  ['SHA2-512', 'ATT,SHA2-512', undefined],
]

t.test('key management', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const km = (path: string) => `${o.https}/api/keymgmt/${path}`
  const gen = await tokens.get('keymgmt:gen')
  const list = await tokens.get('keymgmt:list')
  const get = await tokens.get('keymgmt:get')
  const kids = new Map<string, string>()

  await t.test('create every type; get shows the public part only', async (t) => {
    for (const [type, got, pubBytes] of TYPES) {
      const descr = b64(Buffer.from(`descr of ${type}`))
      const kid = await createKey(o.https, gen, { label: `key ${type}`, type, descr })
      t.match(kid, /^[0-9a-f]{32}$/, `${type}: a KID`)
      kids.set(type, kid)
      const answer = await api(km(`get/${kid}`), get)
      t.equal(answer.status, 200, `${type}: get`)
      t.equal(answer.json.type, got, `${type}: get type`)
      t.equal(answer.json.descr, descr, `${type}: descr`)
      t.equal(typeof answer.json.updated, 'number')
      t.same(
        Object.keys(answer.json).sort(),
        ['descr', 'type', 'updated', ...(pubBytes ? ['pubkey'] : [])].sort(),
        `${type}: nothing else`,
      )
      if (pubBytes) t.equal(bytesOf(answer.json.pubkey).length, pubBytes, `${type}: public key length`)
    }
    const modes = await createKey(o.https, gen, { label: 'both', type: 'SECP384R1', mode: 'ECDH,ExDSA' })
    t.equal((await api(km(`get/${modes}`), get)).json.type, 'SECP384R1', 'get shows no flags')
    const signing = await createKey(o.https, gen, { label: 'sign', type: 'SECP256K1', mode: 'ExDSA' })
    kids.set('signing', signing)
    const listed = (await api(km('list/14'), list)).json.list as { kid: string; type: string }[]
    t.equal(listed.find((k) => k.kid === modes)?.type, 'ATT,PKEY,ECDH,ExDSA,SECP384R1', 'the list shows them')
    t.equal(listed.find((k) => k.kid === signing)?.type, 'ATT,PKEY,ExDSA,SECP256K1')
  })

  await t.test('create refuses bad attributes with 400', async (t) => {
    const cases: [string, unknown][] = [
      ['no label', { type: 'AES256' }],
      ['empty label', { label: '', type: 'AES256' }],
      ['33-char label', { label: 'x'.repeat(33), type: 'AES256' }],
      ['non-ASCII label', { label: 'clé', type: 'AES256' }],
      ['no type', { label: 'k' }],
      ['unknown type', { label: 'k', type: 'RSA2048' }],
      ['mode not a string', { label: 'k', type: 'SECP256R1', mode: 5 }],
      ['descr not base64', { label: 'k', type: 'AES256', descr: '***' }],
      ['descr of 65 bytes', { label: 'k', type: 'AES256', descr: b64(Buffer.alloc(65)) }],
      ['label not a string', { label: 5, type: 'AES256' }],
      ['not JSON', '{'],
    ]
    for (const [what, body] of cases) t.equal((await api(km('create'), gen, body)).status, 400, what)
    t.equal(
      (await api(km('create'), gen, { label: 'x'.repeat(32), type: 'AES256', descr: b64(Buffer.alloc(64)) })).status,
      200,
      'the limits pass',
    )
    t.equal((await api(km('create'), gen, { label: 'k', type: 'AES256', mode: 'ECDH' })).status, 200, 'mode ignored')
  })

  await t.test('list pages of at most 15, oldest first', async (t) => {
    for (let i = 0; i < 6; i++) await createKey(o.https, gen, { label: `filler ${i}`, type: 'AES128' })
    const first = await api(km('list'), list)
    t.equal(first.status, 200)
    const total = first.json.total as number
    t.equal(total, TYPES.length + 2 + 2 + 6, 'every valid key counted, exactly')
    t.equal(first.json.offset, 0)
    t.equal(first.json.listed, 15)
    t.equal(first.json.list.length, 15)
    t.equal(first.json.deleted, 0)
    t.equal(first.json.list[0].kid, kids.get('AES128'), 'the oldest first')
    t.same(Object.keys(first.json.list[0]).sort(), ['created', 'descr', 'kid', 'label', 'type', 'updated'])
    const second = await api(km('list/15'), list)
    t.equal(second.json.offset, 15)
    t.equal(second.json.listed, total - 15)
    t.same((await api(km('list/0'), list)).json.list, first.json.list, '/list/0 is /list')
    const small = await api(km('list/2/3'), list)
    t.same(
      small.json.list.map((k: { kid: string }) => k.kid),
      first.json.list.slice(2, 5).map((k: { kid: string }) => k.kid),
      'offset and count',
    )
    t.equal((await api(km('list/0/40'), list)).json.listed, 15, 'count is capped at 15')
    t.equal((await api(km(`list/${total}`), list)).json.listed, 0, 'past the end: empty')
    for (const path of ['list/abc', 'list/-1', 'list/0/0', 'list/1.5', 'list/0/x'])
      t.equal((await api(km(path), list)).status, 400, path)
  })

  await t.test('update replaces label and descr, journaled', async (t) => {
    const kid = kids.get('AES256')!
    const upd = await tokens.get('keymgmt:upd')
    t.equal((await api(km('update'), upd, { kid, label: 'renamed', descr: b64(Buffer.from('new descr')) })).status, 200)
    const entry = (await api(km('list'), list)).json.list.find((k: { kid: string }) => k.kid === kid)
    t.equal(entry.label, 'renamed')
    t.equal(entry.descr, b64(Buffer.from('new descr')))
    t.equal((await api(km('update'), upd, { kid, label: 'renamed again' })).status, 200)
    t.notOk('descr' in (await api(km(`get/${kid}`), get)).json, 'a missing descr clears it')
    t.equal((await api(km('update'), upd, { kid: '1'.repeat(32), label: 'x' })).status, 404, 'unknown KID')
    t.equal((await api(km('update'), upd, { kid, label: '' })).status, 400)
    t.equal((await api(km('update'), upd, { kid: 'nope', label: 'x' })).status, 400)
    const changed = (await readJournal(o.device.dataDir)).records.filter(
      (r) => r.type === LogType.KEY_ATTRIBUTES_CHANGED,
    )
    t.equal(changed.length, 2)
    t.equal(changed[0]!.decoded?.kid, kid)
  })

  await t.test('delete destroys a key; the slot counts as deleted', async (t) => {
    const del = await tokens.get('keymgmt:del')
    const kid = kids.get('AES192')!
    const before = (await api(`${o.base}/api/system/status`, get)).json.repo_stats
    t.equal((await api(km(`delete/${kid}`), del, undefined, 'DELETE')).status, 200)
    t.equal((await api(km(`get/${kid}`), get)).status, 404)
    t.equal((await api(km(`delete/${kid}`), del, undefined, 'DELETE')).status, 404, 'twice: not found')
    t.equal((await api(km('delete/xyz'), del, undefined, 'DELETE')).status, 400)
    const after = (await api(`${o.base}/api/system/status`, get)).json.repo_stats
    t.equal(after.deleted, before.deleted + 1)
    t.equal(after.total, before.total)
    t.equal((await api(km('list'), list)).json.deleted, after.deleted)
    t.equal(after.fragmentation, Math.floor((after.deleted * 100) / after.total))
    t.equal(after.freeespace + after.total, 1024)
    t.notOk('repo_stats' in (await api(`${o.base}/api/system/status`, undefined)).json, 'repo_stats needs a token')
  })

  await t.test('import public keys: KID from SHA-1, duplicates and bad points 406', async (t) => {
    const imp = await tokens.get('keymgmt:imp')
    const x = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!
    const raw = Buffer.from(x, 'base64url')
    const answer = await api(km('import'), imp, {
      label: 'peer',
      type: 'CURVE25519',
      pubkey: b64(raw),
      descr: b64(Buffer.from('peer key')),
    })
    t.equal(answer.status, 200)
    t.equal(answer.json.kid, createHash('sha1').update(raw).digest('hex').slice(0, 32))
    const shown = await api(km(`get/${answer.json.kid}`), get)
    t.equal(shown.json.type, 'CURVE25519')
    const entry = (await api(km('list/15'), list)).json.list.find((k: { kid: string }) => k.kid === answer.json.kid)
    t.equal(entry.type, 'ECDH,CURVE25519', 'neither ATT nor PKEY: no private part')
    t.equal(shown.json.pubkey, b64(raw))
    t.equal(
      (await api(km('import'), imp, { label: 'again', type: 'CURVE25519', pubkey: b64(raw) })).status,
      406,
      'duplicate',
    )

    const ecdh = createECDH('prime256v1')
    ecdh.generateKeys()
    const compressed = ecdh.getPublicKey(null, 'compressed')
    const p256 = await api(km('import'), imp, { label: 'p256', type: 'SECP256R1', pubkey: b64(ecdh.getPublicKey()) })
    t.equal(p256.status, 200, 'uncompressed SEC1 is accepted')
    t.equal((await api(km(`get/${p256.json.kid}`), get)).json.pubkey, b64(compressed), 'and stored compressed')
    t.equal(p256.json.kid, createHash('sha1').update(compressed).digest('hex').slice(0, 32))
    t.equal(
      (await api(km('import'), imp, { label: 'again', type: 'SECP256R1', pubkey: b64(compressed) })).status,
      406,
      'the same key compressed is a duplicate',
    )

    const offCurve = Buffer.from(compressed)
    offCurve[0] = 0x04
    const ed = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url')
    t.equal(
      (await api(km('import'), imp, { label: 'ed', type: 'ED25519', pubkey: b64(ed) })).status,
      200,
      'an Ed25519 key',
    )
    const failed: [string, unknown][] = [
      ['wrong length', { label: 'k', type: 'CURVE448', pubkey: b64(raw) }],
      ['not a point', { label: 'k', type: 'SECP256R1', pubkey: b64(offCurve) }],
      ['P-256 key as P-384', { label: 'k', type: 'SECP384R1', pubkey: b64(compressed) }],
    ]
    for (const [what, body] of failed) t.equal((await api(km('import'), imp, body)).status, 406, what)
    const cases: [string, unknown][] = [
      ['AES type', { label: 'k', type: 'AES256', pubkey: b64(raw) }],
      ['HMAC type', { label: 'k', type: 'SHA2-256', pubkey: b64(raw) }],
      ['not base64', { label: 'k', type: 'CURVE25519', pubkey: '%%' }],
      ['no pubkey', { label: 'k', type: 'CURVE25519' }],
      ['no label', { type: 'CURVE25519', pubkey: b64(raw) }],
    ]
    for (const [what, body] of cases) t.equal((await api(km('import'), imp, body)).status, 400, what)
  })

  await t.test('search by descr: prefix, suffix, substring; anonymous only when allowed and anchored', async (t) => {
    const search = await tokens.get('keymgmt:search')
    const tagged = await createKey(o.https, gen, {
      label: 'tagged',
      type: 'AES256',
      descr: b64(Buffer.from('ACME-ORDER-000123-end')),
    })
    const find = async (descr: string, token: string | null = search) =>
      api(km('search'), token ?? undefined, { descr })
    const kidsOf = (answer: { json: { list: { kid: string }[] } }) => answer.json.list.map((k) => k.kid)
    t.same(kidsOf(await find(`^${b64(Buffer.from('ACME-ORDER'))}`)), [tagged], 'prefix')
    t.same(kidsOf(await find(`${b64(Buffer.from('123-end'))}$`)), [tagged], 'suffix')
    t.same(kidsOf(await find(b64(Buffer.from('ORDER-000')))), [tagged], 'substring')
    const stored = (await api(km('list'), list)).json.total
    const none = await find(`^${b64(Buffer.from('ORDER'))}`)
    t.equal(none.status, 200, 'no match is not an error')
    t.same(none.json, { offset: 0, total: stored, listed: 0, list: [] }, 'an empty list; total is the repository total')
    const described = await find(b64(Buffer.from('descr of')))
    t.equal(described.json.listed, TYPES.length - 2, 'every match listed (one key renamed, one deleted)')
    t.equal(described.json.total, stored)
    t.equal(
      (await api(km('search'), search, { descr: b64(Buffer.from('descr of')), offset: 8, limit: 3 })).json.listed,
      3,
    )
    t.equal((await find('***')).status, 400)

    const prefix = `^${b64(Buffer.from('ACME-ORDER'))}`
    t.equal((await find(prefix, null)).status, 401, 'no anonymous search while allow_keysearch is off')
    const config = await tokens.get('system:config')
    t.equal((await api(`${o.base}/api/system/config`, config, { allow_keysearch: true })).status, 200)
    const anonymous = await find(prefix, null)
    t.equal(anonymous.status, 200, 'anonymous ^ search once allowed')
    t.same(kidsOf(anonymous), [tagged])
    t.equal((await find(`^${b64(Buffer.from('ACME-'))}`, null)).status, 401, 'fewer than 6 bytes need a token')
    t.equal((await find(b64(Buffer.from('ACME-ORDER')), null)).status, 401, 'not anchored: a token is needed')
    t.equal(
      (await api(`${o.base}/api/keymgmt/search`, undefined, { descr: prefix })).status,
      418,
      'HTTPS only, also anonymous',
    )
  })

  await t.test('HTTPS only, the master refused, scopes enforced and audited', async (t) => {
    const kid = kids.get('CURVE25519')!
    for (const [method, path] of [
      ['POST', 'create'],
      ['GET', 'list'],
      ['GET', `get/${kid}`],
      ['DELETE', `delete/${kid}`],
      ['POST', 'update'],
      ['POST', 'import'],
      ['POST', 'search'],
    ] as const) {
      t.equal(
        (await api(`${o.base}/api/keymgmt/${path}`, gen, method === 'POST' ? {} : undefined, method)).status,
        418,
        `${method} ${path} over HTTP`,
      )
    }
    const master = await login(o.base, 'keymgmt:gen', MASTER_PASS)
    t.equal(
      (await api(km('create'), master, { label: 'm', type: 'AES256' })).status,
      403,
      'the master cannot create keys',
    )
    t.equal((await api(km('list'), gen)).status, 403, 'keymgmt:gen cannot list')
    const use = await login(o.base, `keymgmt:use:${kid}`)
    t.equal((await api(km(`get/${kid}`), use)).status, 200, 'keymgmt:use:<kid> gets its own key')
    t.equal((await api(km(`get/${kids.get('CURVE448')}`), use)).status, 403, '... and no other')
    t.equal((await api(km('list'), undefined)).status, 401)
    const denials = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.FAILED_SCOPE_CHECK)
    t.ok(
      denials.some((r) => r.subject === 'M' && r.decoded?.scope === 'keymgmt:gen'),
      'the master journaled',
    )
    t.ok(
      denials.some((r) => r.decoded?.scope === `keymgmt:use:${kid}`),
      'the foreign KID journaled',
    )
  })

  await t.test('key changes are journaled with their KID', async (t) => {
    const records = (await readJournal(o.device.dataDir)).records
    const of = (type: number) => records.filter((r) => r.type === type)
    t.ok(of(LogType.KEY_GENERATION).length >= TYPES.length + 2)
    t.ok(
      of(LogType.KEY_GENERATION).every(
        (r) => r.result === LogResult.OK && r.decoded?.source === 200 && /^[0-9a-f]{32}$/.test(String(r.decoded.kid)),
      ),
    )
    t.ok(of(LogType.KEY_GENERATION).some((r) => r.decoded?.kid === kids.get('ED448') && r.decoded?.type === 'ED448'))
    t.equal(of(LogType.KEY_DELETE).length, 1)
    t.equal(of(LogType.KEY_DELETE)[0]!.decoded?.kid, kids.get('AES192'))
    t.equal(of(LogType.KEY_IMPORT).length, 3)
  })
})
