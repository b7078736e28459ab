// POST /api/keymgmt/derive (crypto-contract §2, §4) against a real device: the host runs the same
// ECDH, HKDF-SHA256 (info "encedo-<TYPE>") and scalar rules, and must find the device's key.
import { createCipheriv, createHmac, hkdfSync } from 'node:crypto'
import { ed25519, x25519 } from '@noble/curves/ed25519.js'
import { ed448 } from '@noble/curves/ed448.js'
import { p256, p384, p521 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import { CryptoDevice, type EcdhCurve, hostPeer } from './helpers/crypto-device.js'
import { api, b64, bytesOf } from './helpers/keys.js'

/** Each target with a source curve whose secret is long enough, and the host's public key of the derived bytes. */
const ASYMMETRIC: [string, EcdhCurve, (okm: Uint8Array) => Uint8Array][] = [
  ['CURVE25519', 'CURVE25519', (okm) => x25519.getPublicKey(okm)],
  ['ED25519', 'CURVE25519', (okm) => ed25519.getPublicKey(okm)],
  ['SECP256R1', 'SECP256R1', (okm) => p256.getPublicKey(okm, true)],
  ['SECP256K1', 'CURVE448', (okm) => secp256k1.getPublicKey(okm, true)],
  ['SECP384R1', 'SECP384R1', (okm) => p384.getPublicKey(okm, true)],
  [
    'SECP521R1',
    'SECP521R1',
    (okm) =>
      p521.getPublicKey(
        Uint8Array.from(okm, (b, i) => (i === 0 ? b & 1 : b)),
        true,
      ),
  ],
  ['ED448', 'SECP521R1', (okm) => ed448.getPublicKey(okm)],
]
const SIZE: Record<string, number> = {
  CURVE25519: 32,
  ED25519: 32,
  SECP256R1: 32,
  SECP256K1: 32,
  SECP384R1: 48,
  SECP521R1: 66,
  ED448: 57,
  AES256: 32,
  'SHA2-256': 32,
}

function okmOf(secret: Uint8Array, type: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.from(`encedo-${type}`), SIZE[type]!))
}

t.test('derive', async (t) => {
  const device = await CryptoDevice.boot(t)
  const derive = await device.tokens.get('keymgmt:derive')
  const list = async () =>
    (await api(`${device.o.https}/api/keymgmt/list/0/15`, await device.tokens.get('keymgmt:list'))).json
  const sources = new Map<EcdhCurve, Awaited<ReturnType<typeof device.create>>>()
  const source = async (curve: EcdhCurve) => {
    if (!sources.has(curve)) sources.set(curve, await device.create(curve))
    return sources.get(curve)!
  }

  await t.test('asymmetric targets: the public key the host computes; a repeat clashes on the KID', async (t) => {
    for (const [type, curve, publicOf] of ASYMMETRIC) {
      const from = await source(curve)
      const host = hostPeer(curve)
      const body = { kid: from.kid, label: `derived ${type}`, type, pubkey: b64(host.publicKey), mode: 'ExDSA' }
      const derived = await device.keyFrom(await device.post('keymgmt/derive', derive, body))
      const expected = publicOf(okmOf(host.agree(from.pubkey!), type))
      t.same(derived.pubkey, expected, `${type} from ${curve}: the host's public key`)
      const again = await device.post('keymgmt/derive', derive, body)
      t.equal(again.status, 406, `${type}: the same derive again → 406 (a KID clash)`)
      const entry = (await list()).list.find((k: { kid: string }) => k.kid === derived.kid)
      const flags = type.startsWith('SECP') ? 'ExDSA,' : type.startsWith('CURVE') ? 'ECDH,' : 'ExDSA,'
      t.equal(entry?.type, `ATT,PKEY,${flags}${type}`, `${type}: listed like a created key`)
    }
  })

  await t.test('symmetric targets: the host knows the secret; a repeat makes another key', async (t) => {
    const from = await source('CURVE25519')
    const host = hostPeer('CURVE25519')
    const peer = await device.import('CURVE25519', host.publicKey)
    const body = { kid: from.kid, label: 'derived', ext_kid: peer.kid, pubkey: b64(hostPeer('CURVE25519').publicKey) }
    const secret = host.agree(from.pubkey!)

    const aes = await device.keyFrom(await device.post('keymgmt/derive', derive, { ...body, type: 'AES256' }))
    const block = Buffer.alloc(16, 0x5a)
    const enc = await device.post('crypto/cipher/encrypt', aes.use, {
      kid: aes.kid,
      alg: 'AES256-ECB',
      msg: b64(block),
    })
    const cipher = createCipheriv('aes-256-ecb', okmOf(secret, 'AES256'), null).setAutoPadding(false)
    t.same(bytesOf(enc.json.ciphertext), Buffer.concat([cipher.update(block), cipher.final()]), 'AES256: the host key')

    const mac = await device.keyFrom(await device.post('keymgmt/derive', derive, { ...body, type: 'SHA2-256' }))
    const hashed = await device.post('crypto/hmac/hash', mac.use, { kid: mac.kid, msg: b64(block) })
    t.same(
      bytesOf(hashed.json.mac),
      createHmac('sha256', okmOf(secret, 'SHA2-256')).update(block).digest(),
      'SHA2-256: the host key (ext_kid won over pubkey)',
    )
    const again = await device.post('keymgmt/derive', derive, { ...body, type: 'AES256' })
    t.equal(again.status, 200, 'a symmetric key derived again is another key')
    t.not(again.json.kid, aes.kid, 'with a random KID')
    const entry = (await list()).list.find((k: { kid: string }) => k.kid === aes.kid)
    t.equal(entry?.type, 'ATT,PKEY,AES256')
  })

  await t.test(
    'what cannot be derived is 406; malformed fields are 400; the scope is keymgmt:derive or gen',
    async (t) => {
      const x25519Key = await source('CURVE25519')
      const x448Key = await source('CURVE448')
      const pub = (curve: EcdhCurve) => b64(hostPeer(curve).publicKey)
      const ed = await device.create('ED25519')
      const failing: [string, Record<string, unknown>][] = [
        ['a PQC target', { kid: x25519Key.kid, type: 'MLKEM768', pubkey: pub('CURVE25519') }],
        ['an unknown target', { kid: x25519Key.kid, type: 'RSA2048', pubkey: pub('CURVE25519') }],
        ['a secret shorter than the target', { kid: x25519Key.kid, type: 'SECP384R1', pubkey: pub('CURVE25519') }],
        ['57 bytes of a 56-byte secret', { kid: x448Key.kid, type: 'ED448', pubkey: pub('CURVE448') }],
        ['no peer', { kid: x25519Key.kid, type: 'AES128' }],
        ['a peer of another curve', { kid: x25519Key.kid, type: 'AES128', pubkey: pub('CURVE448') }],
        ['a source that cannot ECDH', { kid: ed.kid, type: 'AES128', pubkey: pub('CURVE25519') }],
        ['an unknown source', { kid: 'cd'.repeat(16), type: 'AES128', pubkey: pub('CURVE25519') }],
      ]
      for (const [what, body] of failing) {
        const answer = await device.post('keymgmt/derive', derive, { label: 'x', ...body })
        t.equal(answer.status, 406, `${what} → 406`)
      }
      const good = { kid: x25519Key.kid, label: 'x', type: 'AES128', pubkey: pub('CURVE25519') }
      const malformed: [string, unknown][] = [
        ['a label of 33 characters', { ...good, label: 'x'.repeat(33) }],
        ['no label', { ...good, label: undefined }],
        ['no type', { ...good, type: undefined }],
        ['a descr of 65 bytes', { ...good, descr: b64(Buffer.alloc(65)) }],
        ['an unreadable kid', { ...good, kid: 'x' }],
        ['a malformed ext_kid', { ...good, ext_kid: 'x' }],
        ['a SECP mode that is no string', { ...good, type: 'SECP256R1', mode: 7 }],
      ]
      for (const [what, body] of malformed) {
        t.equal((await device.post('keymgmt/derive', derive, body)).status, 400, `${what} → 400`)
      }
      const sdk = { ...good, descr: null, mode: 'AES128' }
      t.equal((await device.post('keymgmt/derive', derive, sdk)).status, 200, 'null descr and the SDK mode pass')
      const gen = await device.tokens.get('keymgmt:gen')
      t.equal((await device.post('keymgmt/derive', gen, good)).status, 200, 'keymgmt:gen derives too')
      t.equal((await device.post('keymgmt/derive', x25519Key.use, good)).status, 403, 'a use token → 403')
    },
  )

  await t.test('journal records: KEY_DERIVE before the key is stored, and every 400 and 406', async (t) => {
    const from = await source('CURVE25519')
    const host = hostPeer('CURVE25519')
    const body = { kid: from.kid, label: 'journaled', type: 'CURVE25519', pubkey: b64(host.publicKey) }
    const outcomes: [number, Record<string, unknown>, number][] = [
      [200, body, LogResult.OK],
      [406, body, LogResult.FAILED],
      [400, { ...body, label: '' }, LogResult.ERROR],
    ]
    for (const [status, request, result] of outcomes) {
      const answer = await device.post('keymgmt/derive', derive, request)
      t.equal(answer.status, status)
      const rid = answer.headers['x-request-id']
      const records = (await device.records(LogType.KEY_DERIVE)).filter((r) => r.decoded?.rid === rid)
      t.equal(records.length, 1, `${status}: one KEY_DERIVE record`)
      t.equal(records[0]?.result, result, `${status}: its result`)
      t.equal(records[0]?.decoded?.source, status, `${status}: its source`)
      t.equal(records[0]?.decoded?.kid, status === 200 ? answer.json.kid : from.kid, `${status}: its KID`)
    }
    await device.failState(t, 'keymgmt/derive', LogType.KEY_DERIVE, { kid: from.kid, use: derive }, body)
  })
})
