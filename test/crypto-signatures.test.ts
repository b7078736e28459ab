// POST /api/crypto/exdsa/sign and verify (crypto-contract §3, §4) against a real device: every
// signature the device makes verifies on the host (node:crypto, and noble for the RFC 8032
// variants node lacks), every host signature verifies on the device, and a flipped bit does not.
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto'
import { ed25519, ed25519ctx, ed25519ph } from '@noble/curves/ed25519.js'
import { ed448, ed448ph } from '@noble/curves/ed448.js'
import { p256, p384, p521 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import t from 'tap'
import { LogType } from '../protocol/journal.js'
import { CryptoDevice, flipped, OPENSSL } from './helpers/crypto-device.js'
import { b64, bytesOf } from './helpers/keys.js'

const SEC = {
  SECP256R1: { noble: p256, jwk: 'P-256' },
  SECP384R1: { noble: p384, jwk: 'P-384' },
  SECP521R1: { noble: p521, jwk: 'P-521' },
  SECP256K1: { noble: secp256k1, jwk: 'secp256k1' },
} as const
type SecCurve = keyof typeof SEC
const ECDSA = { SHA256WithECDSA: 'sha256', SHA384WithECDSA: 'sha384', SHA512WithECDSA: 'sha512' } as const
const EDDSA = {
  Ed25519: { type: 'ED25519', noble: ed25519, ctx: false },
  Ed25519ctx: { type: 'ED25519', noble: ed25519ctx, ctx: true },
  Ed25519ph: { type: 'ED25519', noble: ed25519ph, ctx: true },
  Ed448: { type: 'ED448', noble: ed448, ctx: true },
  Ed448ph: { type: 'ED448', noble: ed448ph, ctx: true },
} as const

const msg = Buffer.from('a message the device signs, the host checks, and the other way round')
const ctx = Buffer.from('the context')

/** node:crypto's key object of a compressed SEC1 public key. */
function secPublicKey(curve: SecCurve, compressed: Uint8Array): KeyObject {
  const point = SEC[curve].noble.Point.fromBytes(compressed).toBytes(false)
  const half = (point.length - 1) / 2
  const coordinate = (from: number) => Buffer.from(point.subarray(from, from + half)).toString('base64url')
  return createPublicKey({
    key: { kty: 'EC', crv: SEC[curve].jwk, x: coordinate(1), y: coordinate(1 + half) },
    format: 'jwk',
  })
}

/** An uncompressed SEC1 public key of node's key object, as a client would import it. */
function sec1(publicKey: KeyObject): Uint8Array {
  const { x, y } = publicKey.export({ format: 'jwk' })
  return Buffer.concat([Buffer.from([4]), Buffer.from(x!, 'base64url'), Buffer.from(y!, 'base64url')])
}

t.test('ExDSA signatures', async (t) => {
  const device = await CryptoDevice.boot(t)

  await t.test('ECDSA: every hash on every SECP curve, both ways', async (t) => {
    for (const curve of Object.keys(SEC) as SecCurve[]) {
      const key = await device.create(curve, { mode: 'ExDSA' })
      const host = generateKeyPairSync('ec', { namedCurve: OPENSSL[curve]! })
      // Imported without a mode (ECDH only): any key of the curve verifies.
      const imported = await device.import(curve, sec1(host.publicKey))
      for (const [alg, hash] of Object.entries(ECDSA)) {
        const signed = await device.post('crypto/exdsa/sign', key.use, { kid: key.kid, msg: b64(msg), alg })
        t.equal(signed.status, 200, `${curve} ${alg}: sign`)
        const signature = bytesOf(signed.json.sign)
        const publicKey = secPublicKey(curve, key.pubkey!)
        t.ok(verify(hash, msg, { key: publicKey, dsaEncoding: 'der' }, signature), `${curve} ${alg}: node verifies`)

        const hostSignature = sign(hash, msg, { key: host.privateKey, dsaEncoding: 'der' })
        const body = { kid: imported.kid, msg: b64(msg), alg, sign: b64(hostSignature) }
        const checked = await device.post('crypto/exdsa/verify', imported.use, body)
        t.equal(checked.status, 200, `${curve} ${alg}: the device verifies the host's signature`)
        t.equal(checked.text, '', `${curve} ${alg}: with an empty body`)
        for (const [what, tampered] of [
          ['signature', { ...body, sign: b64(flipped(hostSignature, hostSignature.length - 1)) }],
          ['message', { ...body, msg: b64(flipped(msg)) }],
        ] as const) {
          const answer = await device.post('crypto/exdsa/verify', imported.use, tampered)
          t.equal(answer.status, 406, `${curve} ${alg}: a flipped bit of the ${what} → 406`)
        }
        const own = await device.post('crypto/exdsa/verify', key.use, { ...body, kid: key.kid, sign: b64(signature) })
        t.equal(own.status, 200, `${curve} ${alg}: the device verifies its own signature`)
      }
      const notSigning = await device.post('crypto/exdsa/sign', imported.use, {
        kid: imported.kid,
        msg: b64(msg),
        alg: 'SHA256WithECDSA',
      })
      t.equal(notSigning.status, 406, `${curve}: a public key does not sign`)
    }
    const ecdhOnly = await device.create('SECP256R1')
    const refused = await device.post('crypto/exdsa/sign', ecdhOnly.use, {
      kid: ecdhOnly.kid,
      msg: b64(msg),
      alg: 'SHA256WithECDSA',
    })
    t.equal(refused.status, 406, 'a SECP key without the ExDSA flag does not sign')
    const both = await device.create('SECP384R1', { mode: 'ECDH,ExDSA' })
    const signed = await device.post('crypto/exdsa/sign', both.use, {
      kid: both.kid,
      msg: b64(msg),
      alg: 'SHA512WithECDSA',
    })
    t.equal(signed.status, 200, 'a key with both flags signs')
  })

  await t.test('EdDSA: every RFC 8032 variant, both ways', async (t) => {
    const keys = { ED25519: await device.create('ED25519'), ED448: await device.create('ED448') }
    const hostSeeds = { ED25519: ed25519.utils.randomSecretKey(), ED448: ed448.utils.randomSecretKey() }
    const imported = {
      ED25519: await device.import('ED25519', ed25519.getPublicKey(hostSeeds.ED25519)),
      ED448: await device.import('ED448', ed448.getPublicKey(hostSeeds.ED448)),
    }
    for (const [alg, { type, noble, ctx: hasCtx }] of Object.entries(EDDSA)) {
      const key = keys[type]
      const context = hasCtx ? ctx : new Uint8Array(0)
      const body = { kid: key.kid, msg: b64(msg), alg, ...(hasCtx ? { ctx: b64(ctx) } : {}) }
      const signed = await device.post('crypto/exdsa/sign', key.use, body)
      t.equal(signed.status, 200, `${alg}: sign`)
      const signature = bytesOf(signed.json.sign)
      t.equal(signature.length, type === 'ED25519' ? 64 : 114, `${alg}: a raw signature`)
      t.ok(noble.verify(signature, msg, key.pubkey!, { context }), `${alg}: noble verifies`)
      if (alg === 'Ed25519') {
        const publicKey = createPublicKey({
          key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.pubkey!).toString('base64url') },
          format: 'jwk',
        })
        t.ok(verify(null, msg, publicKey, signature), `${alg}: node verifies`)
      }

      const peer = imported[type]
      const hostSignature = noble.sign(msg, hostSeeds[type], { context })
      const theirs = { ...body, kid: peer.kid, sign: b64(hostSignature) }
      const checked = await device.post('crypto/exdsa/verify', peer.use, theirs)
      t.equal(checked.status, 200, `${alg}: the device verifies the host's signature with an imported key`)
      t.equal(checked.text, '', `${alg}: with an empty body`)
      const tampered: [string, Record<string, unknown>][] = [
        ['signature', { ...theirs, sign: b64(flipped(hostSignature, 5)) }],
        ['message', { ...theirs, msg: b64(flipped(msg, 3)) }],
      ]
      if (hasCtx) tampered.push(['context', { ...theirs, ctx: b64(flipped(ctx, 1)) }])
      for (const [what, tamperedBody] of tampered) {
        const answer = await device.post('crypto/exdsa/verify', peer.use, tamperedBody)
        t.equal(answer.status, 406, `${alg}: a flipped bit of the ${what} → 406`)
      }
    }
    const pure = await device.post('crypto/exdsa/sign', keys.ED25519.use, {
      kid: keys.ED25519.kid,
      msg: b64(msg),
      alg: 'Ed25519',
      ctx: b64(ctx),
    })
    t.ok(ed25519.verify(bytesOf(pure.json.sign), msg, keys.ED25519.pubkey!), 'pure Ed25519 ignores a ctx sent with it')
    const noContext = await device.post('crypto/exdsa/sign', keys.ED25519.use, {
      kid: keys.ED25519.kid,
      msg: b64(msg),
      alg: 'Ed25519ctx',
    })
    t.equal(noContext.status, 406, 'Ed25519ctx without a ctx → 406')
  })

  await t.test('an alg that does not fit the key is 406; malformed fields are 400', async (t) => {
    const ed = await device.create('ED25519')
    const ec = await device.create('SECP256K1', { mode: 'ExDSA' })
    for (const [key, alg] of [
      [ed, 'SHA256WithECDSA'],
      [ed, 'Ed448'],
      [ec, 'Ed25519'],
    ] as const) {
      const answer = await device.post('crypto/exdsa/sign', key.use, { kid: key.kid, msg: b64(msg), alg })
      t.equal(answer.status, 406, `${alg} on a ${key === ed ? 'ED25519' : 'SECP256K1'} key → 406`)
    }
    const good = { kid: ed.kid, msg: b64(msg), alg: 'Ed25519ph' }
    const cases: [string, unknown][] = [
      ['an unknown alg', { ...good, alg: 'Ed25519pure' }],
      ['no alg', { kid: ed.kid, msg: b64(msg) }],
      ['no msg', { kid: ed.kid, alg: 'Ed25519' }],
      ['an empty msg', { ...good, msg: '' }],
      ['a msg of 2049 bytes', { ...good, msg: b64(Buffer.alloc(2049)) }],
      ['a ctx of 256 bytes', { ...good, ctx: b64(Buffer.alloc(256)) }],
      ['a msg that is not base64', { ...good, msg: 'no base64!' }],
    ]
    for (const [what, body] of cases) {
      t.equal((await device.post('crypto/exdsa/sign', ed.use, body)).status, 400, what)
    }
    const unreadable = await device.post('crypto/exdsa/sign', ed.use, { ...good, kid: 'xyz' })
    t.equal(unreadable.status, 403, 'an unreadable kid: no use scope can match it (403 before 400)')
    t.equal((await device.post('crypto/exdsa/verify', ed.use, good)).status, 400, 'verify without a signature')
    for (const [key, alg] of [
      [ed, 'Ed25519'],
      [ec, 'SHA512WithECDSA'],
    ] as const) {
      const long = { kid: key.kid, msg: b64(msg), alg, sign: b64(Buffer.alloc(513, 0x30)) }
      t.equal((await device.post('crypto/exdsa/verify', key.use, long)).status, 406, `${alg}: a 513-byte sign → 406`)
    }
    const limits = { ...good, msg: b64(Buffer.alloc(2048, 1)), ctx: b64(Buffer.alloc(255, 2)), descr: null }
    t.equal((await device.post('crypto/exdsa/sign', ed.use, limits)).status, 200, 'the limits themselves pass')
  })

  await t.test('statuses and journal records', async (t) => {
    const key = await device.create('ED448')
    const valid = { kid: key.kid, msg: b64(msg), alg: 'Ed448' }
    await device.checkOutcomes(t, 'crypto/exdsa/sign', LogType.CRYPTO_EXDSA_SIGN, key, {
      valid,
      malformed: { ...valid, ctx: 'not base64!' },
      failing: { ...valid, alg: 'Ed25519' },
    })
    const signature = (await device.post('crypto/exdsa/sign', key.use, valid)).json.sign as string
    await device.checkOutcomes(t, 'crypto/exdsa/verify', LogType.CRYPTO_EXDSA_VERIFY, key, {
      valid: { ...valid, sign: signature },
      malformed: { ...valid, sign: 7 },
      failing: { ...valid, sign: b64(flipped(bytesOf(signature))) },
    })
    await device.failState(t, 'crypto/exdsa/sign', LogType.CRYPTO_EXDSA_SIGN, key, valid)
  })
})
