// Import of every asymmetric key type (crypto-contract §1, §2), keys made on the host with
// node:crypto and @noble/post-quantum: KIDs, listed and get types, duplicates, wrong keys.
import { createECDH, createHash, generateKeyPairSync } from 'node:crypto'
import { ed25519 } from '@noble/curves/ed25519.js'
import { ed448 } from '@noble/curves/ed448.js'
import { p256 } from '@noble/curves/nist.js'
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js'
import { ml_kem512, ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js'
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, createKey, Tokens } from './helpers/keys.js'
import { owned } from './helpers/owner.js'
import { NOT_SMALL_ORDER, SMALL_ORDER } from './helpers/small-order-points.js'

const sha1Kid = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('hex').slice(0, 32)

function okp(kind: 'x25519' | 'x448' | 'ed25519' | 'ed448'): Uint8Array {
  const jwk = generateKeyPairSync(kind as 'x25519').publicKey.export({ format: 'jwk' })
  return new Uint8Array(Buffer.from(jwk.x!, 'base64url'))
}

const SEC_CURVES = { SECP256R1: 'prime256v1', SECP384R1: 'secp384r1', SECP521R1: 'secp521r1', SECP256K1: 'secp256k1' }

/** A SEC1 public key made by node:crypto: compressed and uncompressed. */
function sec(type: keyof typeof SEC_CURVES): { compressed: Uint8Array; uncompressed: Uint8Array } {
  const ecdh = createECDH(SEC_CURVES[type])
  ecdh.generateKeys()
  return { compressed: ecdh.getPublicKey(null, 'compressed'), uncompressed: ecdh.getPublicKey() }
}

/** type, a host-made public key, the form the device stores and shows, list `type` (no ATT, no PKEY). */
const KEYS: [string, Uint8Array, Uint8Array, string][] = [
  ...(
    [
      ['CURVE25519', okp('x25519'), 'ECDH,CURVE25519'],
      ['CURVE448', okp('x448'), 'ECDH,CURVE448'],
      ['ED25519', okp('ed25519'), 'ExDSA,ED25519'],
      ['ED448', okp('ed448'), 'ExDSA,ED448'],
      ['MLKEM512', ml_kem512.keygen().publicKey, 'PQC,MLKEM512'],
      ['MLKEM768', ml_kem768.keygen().publicKey, 'PQC,MLKEM768'],
      ['MLKEM1024', ml_kem1024.keygen().publicKey, 'PQC,MLKEM1024'],
      ['MLDSA44', ml_dsa44.keygen().publicKey, 'PQC,MLDSA44'],
      ['MLDSA65', ml_dsa65.keygen().publicKey, 'PQC,MLDSA65'],
      ['MLDSA87', ml_dsa87.keygen().publicKey, 'PQC,MLDSA87'],
    ] as const
  ).map(([type, key, listed]): [string, Uint8Array, Uint8Array, string] => [type, key, key, listed]),
  ...(Object.keys(SEC_CURVES) as (keyof typeof SEC_CURVES)[]).map((type): [string, Uint8Array, Uint8Array, string] => {
    const { compressed, uncompressed } = sec(type)
    // The uncompressed form for the NIST curves, the compressed one for k1: both are accepted.
    return [type, type === 'SECP256K1' ? compressed : uncompressed, compressed, `ECDH,${type}`]
  }),
]

/** The first bytes of `length` from a counter that `decodes` refuses: not a point of the curve. */
function notAPoint(length: number, decodes: (bytes: Uint8Array) => unknown): Uint8Array {
  for (let i = 2; ; i++) {
    const bytes = new Uint8Array(length)
    bytes[0] = i & 0xff
    bytes[1] = i >> 8
    try {
      decodes(bytes)
    } catch {
      return bytes
    }
  }
}

t.test('import', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const km = (path: string) => `${o.https}/api/keymgmt/${path}`
  const imp = await tokens.get('keymgmt:imp')
  const get = await tokens.get('keymgmt:get')
  const list = await tokens.get('keymgmt:list')
  const del = await tokens.get('keymgmt:del')
  const importKey = (body: Record<string, unknown>) => api(km('import'), imp, { label: 'imported', ...body })
  const listedOf = async (kid: string) =>
    (await Promise.all([0, 15, 30].map((offset) => api(km(`list/${offset}`), list))))
      .flatMap((page) => page.json.list as { kid: string; type: string }[])
      .find((k) => k.kid === kid)

  await t.test("every asymmetric type, with the SDK's mode; KID = SHA-1 of the stored key", async (t) => {
    for (const [type, sent, stored, listed] of KEYS) {
      const answer = await importKey({ type, pubkey: b64(sent), mode: type, descr: b64(Buffer.from(type)) })
      t.equal(answer.status, 200, `${type}: imported`)
      t.equal(answer.json.kid, sha1Kid(stored), `${type}: KID`)
      const shown = await api(km(`get/${answer.json.kid}`), get)
      t.equal(shown.json.type, type, `${type}: get type is the bare algorithm`)
      t.equal(shown.json.pubkey, b64(stored), `${type}: get shows the key${sent === stored ? '' : ' compressed'}`)
      t.equal((await listedOf(answer.json.kid))?.type, listed, `${type}: listed as ${listed}`)
    }
    t.equal((await api(km('list'), list)).json.total, KEYS.length)
  })

  await t.test('SECP mode flags on import; other types ignore it', async (t) => {
    const { uncompressed } = sec('SECP384R1')
    const signing = await importKey({ type: 'SECP384R1', pubkey: b64(uncompressed), mode: 'ExDSA,ECDH' })
    t.equal((await listedOf(signing.json.kid))?.type, 'ECDH,ExDSA,SECP384R1')
    const ed = await importKey({ type: 'ED448', pubkey: b64(okp('ed448')), mode: 'ECDH' })
    t.equal((await listedOf(ed.json.kid))?.type, 'ExDSA,ED448')
  })

  await t.test('the same key again is 406 while it exists; once deleted it imports again', async (t) => {
    for (const [type, sent, stored] of KEYS) {
      t.equal((await importKey({ type, pubkey: b64(stored) })).status, 406, `${type}: duplicate`)
      if (sent !== stored) t.equal((await importKey({ type, pubkey: b64(sent) })).status, 406, `${type}: other form`)
      const kid = sha1Kid(stored)
      t.equal((await api(km(`delete/${kid}`), del, undefined, 'DELETE')).status, 200)
      const again = await importKey({ type, pubkey: b64(sent) })
      t.equal(again.status, 200, `${type}: imported again after its delete`)
      t.equal(again.json.kid, kid, `${type}: the same KID`)
    }
  })

  await t.test("a created key's public key clashes with its KID", async (t) => {
    const gen = await tokens.get('keymgmt:gen')
    for (const type of ['CURVE448', 'SECP521R1', 'ED25519', 'MLKEM512', 'MLDSA44']) {
      const kid = await createKey(o.https, gen, { label: 'made here', type })
      const pubkey = (await api(km(`get/${kid}`), get)).json.pubkey
      const clash = await importKey({ type, pubkey })
      t.equal(clash.status, 406, `${type}: the device's own key`)
      t.equal(clash.json.error, 'duplicate_key')
    }
  })

  await t.test('a key that is not one of the type: 406', async (t) => {
    const cases: [string, string, Uint8Array][] = []
    for (const [type, , stored] of KEYS) {
      cases.push([`${type}: one byte short`, type, stored.subarray(0, stored.length - 1)])
      cases.push([`${type}: one byte more`, type, Uint8Array.from([...stored, 0])])
    }
    for (const type of Object.keys(SEC_CURVES) as (keyof typeof SEC_CURVES)[]) {
      const off = Uint8Array.from(sec(type).uncompressed)
      off[off.length - 1]! ^= 1
      cases.push([`${type}: uncompressed, off the curve`, type, off])
    }
    const x = notAPoint(33, (bytes) => p256.Point.fromBytes(Uint8Array.from([2, ...bytes.subarray(1)])))
    cases.push(['SECP256R1: compressed, no point has this x', 'SECP256R1', Uint8Array.from([2, ...x.subarray(1)])])
    cases.push(['ED25519: not a point', 'ED25519', notAPoint(32, (bytes) => ed25519.Point.fromBytes(bytes))])
    cases.push(['ED448: not a point', 'ED448', notAPoint(57, (bytes) => ed448.Point.fromBytes(bytes))])
    // Points, but of small order: every EdDSA verify refuses them, so the import does too.
    cases.push(['ED25519: the identity', 'ED25519', Uint8Array.from([1, ...new Uint8Array(31)])])
    cases.push(['ED25519: order 2 (y = p - 1)', 'ED25519', Buffer.from('ec' + 'ff'.repeat(30) + '7f', 'hex')])
    cases.push(['ED448: the identity', 'ED448', Uint8Array.from([1, ...new Uint8Array(56)])])
    const unreduced = Uint8Array.from(ml_kem768.keygen().publicKey)
    unreduced[0] = 0xff
    unreduced[1]! |= 0x0f
    cases.push(['MLKEM768: a coefficient of 4095, not below q', 'MLKEM768', unreduced])
    cases.push(['CURVE25519: a P-256 key', 'CURVE25519', sec('SECP256R1').compressed])
    cases.push(['SECP384R1: a P-256 key', 'SECP384R1', sec('SECP256R1').compressed])
    cases.push(['MLDSA65: an ML-DSA-44 key', 'MLDSA65', ml_dsa44.keygen().publicKey])
    cases.push(['ED25519: empty', 'ED25519', new Uint8Array(0)])
    for (const [what, type, key] of cases) {
      const answer = await importKey({ type, pubkey: b64(key) })
      t.equal(answer.status, 406, what)
    }
  })

  await t.test('a malformed request: 400', async (t) => {
    const key = b64(okp('x25519'))
    const cases: [string, Record<string, unknown>][] = [
      ['AES type', { type: 'AES256', pubkey: key }],
      ['HMAC type', { type: 'SHA3-256', pubkey: key }],
      ['unknown type', { type: 'RSA2048', pubkey: key }],
      ['not base64', { type: 'CURVE25519', pubkey: '%%%%' }],
      ['no pubkey', { type: 'CURVE25519' }],
      ['no label', { label: undefined, type: 'CURVE25519', pubkey: key }],
      ['33-char label', { label: 'x'.repeat(33), type: 'CURVE25519', pubkey: key }],
      ['descr of 65 bytes', { type: 'CURVE25519', pubkey: key, descr: b64(Buffer.alloc(65)) }],
    ]
    for (const [what, body] of cases) t.equal((await importKey(body)).status, 400, what)
  })

  await t.test('journaled: KEY_IMPORT with the key type, for each import made', async (t) => {
    const imports = (await readJournal(o.device.dataDir)).records.filter((r) => r.type === LogType.KEY_IMPORT)
    t.equal(imports.length, 2 * KEYS.length + 2, 'the first imports, the two with modes and the re-imports')
    t.ok(imports.every((r) => r.result === LogResult.OK && r.decoded?.source === 200))
    t.same(
      imports.slice(0, KEYS.length).map((r) => [r.decoded?.kid, r.decoded?.type]),
      KEYS.map(([type, , stored]) => [sha1Kid(stored), type]),
    )
  })

  // After the count above: the look-alikes are imported.
  await t.test(
    'X25519 and X448 points of small order: 406, as Ed25519 ones are; their look-alikes import',
    async (t) => {
      for (const type of ['CURVE25519', 'CURVE448'] as const) {
        for (const [what, key] of SMALL_ORDER[type]) {
          const answer = await importKey({ type, pubkey: b64(key) })
          t.equal(answer.status, 406, `${type} ${what}: 406`)
          t.equal(answer.json?.error, 'bad_public_key', `${type} ${what}: not a ${type} public key`)
        }
        for (const [what, key] of NOT_SMALL_ORDER[type])
          t.equal((await importKey({ type, pubkey: b64(key) })).status, 200, `${type} ${what}: imported`)
      }
    },
  )
})
