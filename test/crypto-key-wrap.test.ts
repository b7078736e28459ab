// POST /api/crypto/cipher/wrap and unwrap (crypto-contract §3, §4) against a real device: RFC 3394
// checked with node:crypto's id-aes*-wrap under the KEK the host derives in ECDH mode.
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto'
import t from 'tap'
import { LogType } from '../protocol/journal.js'
import { CryptoDevice, flipped, hostPeer } from './helpers/crypto-device.js'
import { b64, bytesOf } from './helpers/keys.js'

const WIDTH = { AES128: 16, AES192: 24, AES256: 32 } as const
const DEFAULT_IV = Buffer.from('A6A6A6A6A6A6A6A6', 'hex')
const keyData = Buffer.from('0011223344556677889900aabbccddeeff0102030405060708090a0b0c0d0e0f', 'hex')

function hostWrap(kek: Buffer, data: Buffer, iv = DEFAULT_IV): Buffer {
  const cipher = createCipheriv(`id-aes${kek.length * 8}-wrap`, kek, iv)
  return Buffer.concat([cipher.update(data), cipher.final()])
}

function hostUnwrap(kek: Buffer, wrapped: Uint8Array, iv = DEFAULT_IV): Buffer {
  const decipher = createDecipheriv(`id-aes${kek.length * 8}-wrap`, kek, iv)
  return Buffer.concat([decipher.update(wrapped), decipher.final()])
}

t.test('key wrap', async (t) => {
  const device = await CryptoDevice.boot(t)

  await t.test('ECDH mode: the KEK is HKDF(secret, "encedo-kek" ‖ ctx), as the host derives it', async (t) => {
    const key = await device.create('CURVE25519')
    const host = hostPeer('CURVE25519')
    const secret = host.agree(key.pubkey!)
    for (const [alg, width] of Object.entries(WIDTH)) {
      for (const [what, ctx, iv] of [
        ['default', Buffer.alloc(0), undefined],
        ['ctx and iv', Buffer.from('wrapping context'), Buffer.from('0102030405060708', 'hex')],
      ] as const) {
        const kek = Buffer.from(
          hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.concat([Buffer.from('encedo-kek'), ctx]), width),
        )
        const body = {
          kid: key.kid,
          pubkey: b64(host.publicKey),
          ...(alg !== 'AES256' ? { alg } : {}),
          ...(ctx.length ? { ctx: b64(ctx) } : {}),
          ...(iv ? { iv: b64(iv) } : {}),
        }
        const wrapped = await device.post('crypto/cipher/wrap', key.use, { ...body, msg: b64(keyData) })
        t.equal(wrapped.status, 200, `${alg} ${what}: wrap`)
        t.same(bytesOf(wrapped.json.wrapped), hostWrap(kek, keyData, iv), `${alg} ${what}: as node wraps`)
        t.equal(bytesOf(wrapped.json.wrapped).length, keyData.length + 8, `${alg} ${what}: 8 bytes longer`)
        const theirs = hostWrap(kek, keyData.subarray(0, 24), iv)
        const unwrapped = await device.post('crypto/cipher/unwrap', key.use, { ...body, msg: b64(theirs) })
        t.equal(unwrapped.status, 200, `${alg} ${what}: unwrap`)
        t.same(bytesOf(unwrapped.json.unwrapped), keyData.subarray(0, 24), `${alg} ${what}: node's wrap unwrapped`)
        t.same(hostUnwrap(kek, bytesOf(wrapped.json.wrapped), iv), keyData, `${alg} ${what}: node unwraps the device's`)
      }
    }
  })

  await t.test('a stored AES key: cut to the alg width, never widened; tampering is 406', async (t) => {
    const aes256 = await device.create('AES256')
    const aes128 = await device.create('AES128')
    for (const alg of Object.keys(WIDTH)) {
      const body = { kid: aes256.kid, alg }
      const wrapped = await device.post('crypto/cipher/wrap', aes256.use, { ...body, msg: b64(keyData) })
      t.equal(wrapped.status, 200, `${alg}: wrap`)
      const unwrapped = await device.post('crypto/cipher/unwrap', aes256.use, { ...body, msg: wrapped.json.wrapped })
      t.same(bytesOf(unwrapped.json.unwrapped), keyData, `${alg}: round trip`)
      const tampered = flipped(bytesOf(wrapped.json.wrapped), 12)
      const refused = await device.post('crypto/cipher/unwrap', aes256.use, { ...body, msg: b64(tampered) })
      t.equal(refused.status, 406, `${alg}: a flipped bit → 406`)
      const otherIv = await device.post('crypto/cipher/unwrap', aes256.use, {
        ...body,
        msg: wrapped.json.wrapped,
        iv: b64(Buffer.alloc(8, 1)),
      })
      t.equal(otherIv.status, 406, `${alg}: another IV → 406`)
    }
    const wide = await device.post('crypto/cipher/wrap', aes128.use, { kid: aes128.kid, msg: b64(keyData) })
    t.equal(wide.status, 406, 'AES256 (the default) with an AES128 key → 406')
    const narrow = await device.post('crypto/cipher/wrap', aes128.use, {
      kid: aes128.kid,
      alg: 'AES128',
      msg: b64(keyData),
    })
    t.equal(narrow.status, 200, 'AES128 with an AES128 key')
    for (const [what, data] of [
      ['15 bytes', keyData.subarray(0, 15)],
      ['8 bytes', keyData.subarray(0, 8)],
      ['20 bytes', keyData.subarray(0, 20)],
    ] as const) {
      const answer = await device.post('crypto/cipher/wrap', aes256.use, { kid: aes256.kid, msg: b64(data) })
      t.equal(answer.status, 406, `msg of ${what} → 406`)
    }
    const hmacKey = await device.create('SHA2-256')
    const wrongKey = await device.post('crypto/cipher/wrap', hmacKey.use, { kid: hmacKey.kid, msg: b64(keyData) })
    t.equal(wrongKey.status, 406, 'an HMAC key → 406')
  })

  await t.test('malformed fields are 400', async (t) => {
    const key = await device.create('AES256')
    const good = { kid: key.kid, msg: b64(keyData) }
    const cases: [string, unknown][] = [
      ['an unknown alg', { ...good, alg: 'AES512' }],
      ['an iv of 7 bytes', { ...good, iv: b64(Buffer.alloc(7)) }],
      ['an iv of 16 bytes', { ...good, iv: b64(Buffer.alloc(16)) }],
      ['a ctx of 65 bytes', { ...good, ctx: b64(Buffer.alloc(65)) }],
      ['no msg', { kid: key.kid }],
      ['a msg of 2049 bytes', { ...good, msg: b64(Buffer.alloc(2049)) }],
    ]
    for (const [what, body] of cases)
      t.equal((await device.post('crypto/cipher/wrap', key.use, body)).status, 400, what)
    const unreadable = await device.post('crypto/cipher/wrap', key.use, '{"kid":')
    t.equal(unreadable.status, 403, 'not JSON: no KID, so no use scope matches (403 before 400)')
    const nulls = await device.post('crypto/cipher/wrap', key.use, { ...good, alg: null, iv: null, ctx: null })
    t.equal(nulls.status, 200, 'null fields are absent')
  })

  await t.test('statuses and journal records', async (t) => {
    const key = await device.create('AES192')
    const valid = { kid: key.kid, alg: 'AES192', msg: b64(keyData) }
    await device.checkOutcomes(t, 'crypto/cipher/wrap', LogType.CRYPTO_WRAP, key, {
      valid,
      malformed: { ...valid, iv: b64(Buffer.alloc(9)) },
      failing: { ...valid, alg: 'AES256' },
    })
    const wrapped = (await device.post('crypto/cipher/wrap', key.use, valid)).json.wrapped as string
    await device.checkOutcomes(t, 'crypto/cipher/unwrap', LogType.CRYPTO_UNWRAP, key, {
      valid: { ...valid, msg: wrapped },
      malformed: { ...valid, msg: 'not base64!' },
      failing: { ...valid, msg: b64(flipped(bytesOf(wrapped))) },
    })
    await device.failState(t, 'crypto/cipher/wrap', LogType.CRYPTO_WRAP, key, valid)
  })
})
