// All 23 key types of crypto-contract §1 through their life over HTTPS: create (with the JS SDK's
// `mode`), list, get, update, delete; the exact `type` strings, public key lengths and KIDs.
import { createHash, createPublicKey } from 'node:crypto'
import { ml_kem512, ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js'
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, bytesOf, createKey, Tokens } from './helpers/keys.js'
import { owned } from './helpers/owner.js'

/** type, list `type`, get `type`, public key bytes (none for symmetric keys). */
const TYPES: [string, string, string, number | undefined][] = [
  ['AES128', 'ATT,PKEY,AES128', 'ATT,AES128', undefined],
  ['AES192', 'ATT,PKEY,AES192', 'ATT,AES192', undefined],
  ['AES256', 'ATT,PKEY,AES256', 'ATT,AES256', undefined],
  ['SHA2-256', 'ATT,PKEY,SHA2-256', 'ATT,SHA2-256', undefined],
  ['SHA2-384', 'ATT,PKEY,SHA2-384', 'ATT,SHA2-384', undefined],
  ['SHA2-512', 'ATT,PKEY,SHA2-512', 'ATT,SHA2-512', undefined],
  ['SHA3-256', 'ATT,PKEY,SHA3-256', 'ATT,SHA3-256', undefined],
  ['SHA3-384', 'ATT,PKEY,SHA3-384', 'ATT,SHA3-384', undefined],
  ['SHA3-512', 'ATT,PKEY,SHA3-512', 'ATT,SHA3-512', undefined],
  ['CURVE25519', 'ATT,PKEY,ECDH,CURVE25519', 'CURVE25519', 32],
  ['CURVE448', 'ATT,PKEY,ECDH,CURVE448', 'CURVE448', 56],
  ['ED25519', 'ATT,PKEY,ExDSA,ED25519', 'ED25519', 32],
  ['ED448', 'ATT,PKEY,ExDSA,ED448', 'ED448', 57],
  // The JS SDK sends the type name as `mode`: no known flag, so ECDH.
  ['SECP256R1', 'ATT,PKEY,ECDH,SECP256R1', 'SECP256R1', 33],
  ['SECP384R1', 'ATT,PKEY,ECDH,SECP384R1', 'SECP384R1', 49],
  ['SECP521R1', 'ATT,PKEY,ECDH,SECP521R1', 'SECP521R1', 67],
  ['SECP256K1', 'ATT,PKEY,ECDH,SECP256K1', 'SECP256K1', 33],
  ['MLKEM512', 'ATT,PKEY,PQC,MLKEM512', 'MLKEM512', 800],
  ['MLKEM768', 'ATT,PKEY,PQC,MLKEM768', 'MLKEM768', 1184],
  ['MLKEM1024', 'ATT,PKEY,PQC,MLKEM1024', 'MLKEM1024', 1568],
  ['MLDSA44', 'ATT,PKEY,PQC,MLDSA44', 'MLDSA44', 1312],
  ['MLDSA65', 'ATT,PKEY,PQC,MLDSA65', 'MLDSA65', 1952],
  ['MLDSA87', 'ATT,PKEY,PQC,MLDSA87', 'MLDSA87', 2592],
]

/** The official JS SDK's `mode` of a type (crypto-contract §1). */
function sdkMode(type: string): string {
  return type === 'ED25519' ? 'ExDSA' : type === 'CURVE25519' ? 'ECDH' : type
}

const sha1Kid = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('hex').slice(0, 32)
const ML_KEM = { MLKEM512: ml_kem512, MLKEM768: ml_kem768, MLKEM1024: ml_kem1024 } as const

/** Checks on the host that `pubkey` is a real public key of `type`, where an independent library can tell. */
function hostAccepts(type: string, pubkey: Uint8Array): boolean {
  const x = Buffer.from(pubkey).toString('base64url')
  if (type === 'ED25519' || type === 'ED448')
    return (
      createPublicKey({ key: { kty: 'OKP', crv: type === 'ED25519' ? 'Ed25519' : 'Ed448', x }, format: 'jwk' })
        .asymmetricKeyType === type.toLowerCase()
    )
  if (type in ML_KEM) return ML_KEM[type as keyof typeof ML_KEM].encapsulate(pubkey).cipherText.length > 0
  return true
}

t.test('every key type: created, listed, read, updated and deleted', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const km = (path: string) => `${o.https}/api/keymgmt/${path}`
  const gen = await tokens.get('keymgmt:gen')
  const list = await tokens.get('keymgmt:list')
  const get = await tokens.get('keymgmt:get')
  const upd = await tokens.get('keymgmt:upd')
  const del = await tokens.get('keymgmt:del')
  const kids: string[] = []

  await t.test("create with the JS SDK's mode; get shows the contract's type and public key", async (t) => {
    for (const [type, , got, pubBytes] of TYPES) {
      const descr = b64(Buffer.from(`descr of ${type}`))
      const kid = await createKey(o.https, gen, { label: `key ${type}`, type, mode: sdkMode(type), descr })
      kids.push(kid)
      const answer = await api(km(`get/${kid}`), get)
      t.equal(answer.status, 200, `${type}: get`)
      t.equal(answer.json.type, got, `${type}: get type`)
      t.equal(answer.json.descr, descr, `${type}: descr`)
      t.same(
        Object.keys(answer.json).sort(),
        ['descr', 'type', 'updated', ...(pubBytes ? ['pubkey'] : [])].sort(),
        `${type}: nothing else`,
      )
      if (pubBytes) {
        const pubkey = bytesOf(answer.json.pubkey)
        t.equal(pubkey.length, pubBytes, `${type}: public key of ${pubBytes} bytes`)
        t.equal(answer.json.pubkey, Buffer.from(pubkey).toString('base64'), `${type}: standard padded base64`)
        t.equal(kid, sha1Kid(pubkey), `${type}: KID = SHA-1 of the public key`)
        t.ok(hostAccepts(type, pubkey), `${type}: a valid public key`)
        if (type.startsWith('SECP')) t.ok(pubkey[0] === 2 || pubkey[0] === 3, `${type}: compressed SEC1`)
      } else t.match(kid, /^[0-9a-f]{32}$/, `${type}: a random KID`)
    }
    t.equal(new Set(kids).size, TYPES.length, 'every KID differs')
  })

  await t.test('list: every type with its flags, oldest first, 15 per page, total exact', async (t) => {
    const first = await api(km('list'), list)
    const second = await api(km('list/15'), list)
    t.equal(first.status, 200)
    t.same([first.json.total, first.json.listed, second.json.listed], [TYPES.length, 15, TYPES.length - 15])
    const listed = [...first.json.list, ...second.json.list] as { kid: string; type: string; label: string }[]
    t.same(
      listed.map((k) => k.kid),
      kids,
      'in creation order',
    )
    for (const [i, [type, listedType]] of TYPES.entries()) {
      t.equal(listed[i]!.type, listedType, `${type}: listed type`)
      t.equal(listed[i]!.label, `key ${type}`)
    }
  })

  await t.test('update: label and descr replaced on every type; updated moves forward', async (t) => {
    for (const [i, [type]] of TYPES.entries()) {
      const kid = kids[i]!
      const before = (await api(km(`get/${kid}`), get)).json
      t.equal((await api(km('update'), upd, { kid, label: `renamed ${type}` })).status, 200, `${type}: update`)
      const after = (await api(km(`get/${kid}`), get)).json
      t.notOk('descr' in after, `${type}: no descr sent, none kept`)
      t.ok(after.updated > before.updated, `${type}: updated moved forward`)
      t.equal(after.type, before.type, `${type}: the type unchanged`)
      t.equal(after.pubkey, before.pubkey, `${type}: the public key unchanged`)
    }
    const listed = (await api(km('list/0/15'), list)).json.list as { label: string; type: string }[]
    t.same(
      listed.map((k) => k.label),
      TYPES.slice(0, 15).map(([type]) => `renamed ${type}`),
      'the new labels, the order kept',
    )
  })

  await t.test('delete every type', async (t) => {
    for (const [i, [type]] of TYPES.entries()) {
      t.equal((await api(km(`delete/${kids[i]}`), del, undefined, 'DELETE')).status, 200, `${type}: delete`)
      t.equal((await api(km(`get/${kids[i]}`), get)).status, 404, `${type}: gone`)
    }
    const empty = await api(km('list'), list)
    // Each update left the key's old slot deleted too.
    t.same([empty.json.total, empty.json.listed, empty.json.deleted], [0, 0, 2 * TYPES.length])
  })

  await t.test('journaled: KEY_GENERATION, KEY_ATTRIBUTES_CHANGED and KEY_DELETE with the key type', async (t) => {
    const records = (await readJournal(o.device.dataDir)).records
    const of = (logType: number) => records.filter((r) => r.type === logType && r.result === LogResult.OK)
    const generated = of(LogType.KEY_GENERATION)
    t.same(
      generated.map((r) => [r.decoded?.kid, r.decoded?.type, r.decoded?.source]),
      TYPES.map(([type], i) => [kids[i]!, type, 200]),
    )
    t.same(
      of(LogType.KEY_ATTRIBUTES_CHANGED).map((r) => r.decoded?.kid),
      kids,
    )
    t.same(
      of(LogType.KEY_DELETE).map((r) => [r.decoded?.kid, r.decoded?.type]),
      TYPES.map(([type], i) => [kids[i], type]),
    )
  })
})

t.test('mode: flags of SECP keys in either order; ignored by every other type', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const list = await tokens.get('keymgmt:list')
  const cases: [string, unknown, string][] = [
    ['SECP384R1', 'ECDH,ExDSA', 'ATT,PKEY,ECDH,ExDSA,SECP384R1'],
    ['SECP256R1', 'ExDSA,ECDH', 'ATT,PKEY,ECDH,ExDSA,SECP256R1'],
    ['SECP256K1', 'ExDSA', 'ATT,PKEY,ExDSA,SECP256K1'],
    ['SECP256R1', 'SIGN', 'ATT,PKEY,ECDH,SECP256R1'],
    ['SECP256R1', undefined, 'ATT,PKEY,ECDH,SECP256R1'],
    ['ED25519', 'ECDH', 'ATT,PKEY,ExDSA,ED25519'],
    ['CURVE448', 'ExDSA', 'ATT,PKEY,ECDH,CURVE448'],
    ['AES256', 'ECDH', 'ATT,PKEY,AES256'],
    ['MLDSA65', 'ExDSA', 'ATT,PKEY,PQC,MLDSA65'],
    ['MLKEM1024', 'ECDH,ExDSA', 'ATT,PKEY,PQC,MLKEM1024'],
    ['SHA3-256', 'SHA3-256', 'ATT,PKEY,SHA3-256'],
  ]
  const kids: string[] = []
  for (const [type, mode, listed] of cases) {
    const kid = await createKey(o.https, gen, { label: `${type} ${String(mode)}`, type, mode })
    kids.push(kid)
    const entry = (await api(`${o.https}/api/keymgmt/list`, list)).json.list.find((k: { kid: string }) => k.kid === kid)
    t.equal(entry.type, listed, `${type} with mode ${JSON.stringify(mode)}`)
  }
  t.equal(
    (await api(`${o.https}/api/keymgmt/create`, gen, { label: 'k', type: 'SECP256R1', mode: 5 })).status,
    400,
    'a SECP mode that is not a string',
  )
  t.equal((await api(`${o.https}/api/keymgmt/list`, list)).json.total, kids.length, 'nothing made by the 400')
})
