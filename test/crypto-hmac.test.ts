// POST /api/crypto/hmac/hash and verify (crypto-contract §3, §4) against a real device: in ECDH
// mode the host knows the key (the raw shared secret), so every digest is checked with node:crypto.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { LogType } from '../protocol/journal.js'
import { CryptoDevice, DIGESTS, ECDH_CURVES, flipped, hostPeer } from './helpers/crypto-device.js'
import { b64, bytesOf } from './helpers/keys.js'

const msg = Buffer.from('a message to authenticate')

t.test('HMAC', async (t) => {
  const device = await CryptoDevice.boot(t)

  await t.test(
    'ECDH mode: the raw shared secret keys HMAC with every digest, as node:crypto computes it',
    async (t) => {
      for (const curve of ECDH_CURVES) {
        const key = await device.create(curve)
        const host = hostPeer(curve)
        const secret = host.agree(key.pubkey!)
        for (const [alg, digest] of Object.entries(DIGESTS)) {
          const body = { kid: key.kid, msg: b64(msg), alg, pubkey: b64(host.publicKey) }
          const answer = await device.post('crypto/hmac/hash', key.use, body)
          t.equal(answer.status, 200, `${curve} ${alg}`)
          const expected = createHmac(digest, secret).update(msg).digest()
          t.same(bytesOf(answer.json.mac), expected, `${curve} ${alg}: node's HMAC`)
          const verified = await device.post('crypto/hmac/verify', key.use, { ...body, mac: b64(expected) })
          t.equal(verified.status, 200, `${curve} ${alg}: verify`)
          t.equal(verified.text, '', `${curve} ${alg}: an empty body`)
        }
        const noAlg = await device.post('crypto/hmac/hash', key.use, {
          kid: key.kid,
          msg: b64(msg),
          pubkey: b64(host.publicKey),
        })
        t.equal(noAlg.status, 406, `${curve}: ECDH mode without alg → 406`)
      }
    },
  )

  await t.test('ext_kid wins over pubkey; the peer must be on the curve of the key', async (t) => {
    const key = await device.create('CURVE448')
    const host = hostPeer('CURVE448')
    const peer = await device.import('CURVE448', host.publicKey)
    const answer = await device.post('crypto/hmac/hash', key.use, {
      kid: key.kid,
      msg: b64(msg),
      alg: 'SHA3-384',
      ext_kid: peer.kid,
      pubkey: b64(hostPeer('CURVE448').publicKey),
    })
    t.equal(answer.status, 200)
    t.same(bytesOf(answer.json.mac), createHmac('sha3-384', host.agree(key.pubkey!)).update(msg).digest())
    const mismatch = await device.post('crypto/hmac/hash', key.use, {
      kid: key.kid,
      msg: b64(msg),
      alg: 'SHA2-256',
      pubkey: b64(hostPeer('CURVE25519').publicKey),
    })
    t.equal(mismatch.status, 406, 'an X25519 peer of an X448 key → 406')
    const x25519 = await device.import('CURVE25519', hostPeer('CURVE25519').publicKey)
    const foreign = await device.post('crypto/hmac/hash', key.use, {
      kid: key.kid,
      msg: b64(msg),
      alg: 'SHA2-256',
      ext_kid: x25519.kid,
    })
    t.equal(foreign.status, 406, 'an ext_kid of another curve → 406')
    const signing = await device.create('SECP256R1', { mode: 'ExDSA' })
    const cannot = await device.post('crypto/hmac/hash', signing.use, {
      kid: signing.kid,
      msg: b64(msg),
      alg: 'SHA2-256',
      pubkey: b64(hostPeer('SECP256R1').publicKey),
    })
    t.equal(cannot.status, 406, 'a key that cannot ECDH → 406')
  })

  await t.test('HMAC keys: the digest of the key type, alg ignored; verify and tamper', async (t) => {
    for (const [type, digest] of Object.entries(DIGESTS)) {
      const key = await device.create(type)
      const body = { kid: key.kid, msg: b64(msg) }
      const answer = await device.post('crypto/hmac/hash', key.use, body)
      t.equal(answer.status, 200, type)
      const mac = bytesOf(answer.json.mac)
      t.equal(mac.length, createHmac(digest, 'k').digest().length, `${type}: the MAC of its digest`)
      const other = await device.post('crypto/hmac/hash', key.use, { ...body, alg: 'SHA2-256' })
      t.same(other.json.mac, answer.json.mac, `${type}: alg is ignored`)
      t.equal((await device.post('crypto/hmac/verify', key.use, { ...body, mac: b64(mac) })).status, 200)
      for (const [what, tampered] of [
        ['MAC', { ...body, mac: b64(flipped(mac, mac.length - 1)) }],
        ['message', { ...body, msg: b64(flipped(msg)), mac: b64(mac) }],
        ['MAC length', { ...body, mac: b64(mac.subarray(0, 16)) }],
      ] as const) {
        const refused = await device.post('crypto/hmac/verify', key.use, tampered)
        t.equal(refused.status, 406, `${type}: a changed ${what} → 406`)
      }
    }
    const key = await device.create('SHA2-384')
    const plain = await device.post('crypto/hmac/hash', key.use, { kid: key.kid, msg: b64(msg) })
    for (const alg of ['SHA3-512', 'no digest at all', 7]) {
      const ignored = await device.post('crypto/hmac/hash', key.use, { kid: key.kid, msg: b64(msg), alg })
      t.same([ignored.status, ignored.json?.mac], [200, plain.json.mac], `an HMAC key ignores alg ${alg}`)
    }
    const x25519 = await device.create('CURVE25519')
    const ecdhMode = { kid: x25519.kid, msg: b64(msg), pubkey: b64(hostPeer('CURVE25519').publicKey), alg: 'SHA1' }
    t.equal((await device.post('crypto/hmac/hash', x25519.use, ecdhMode)).status, 400, 'in ECDH mode alg is read: 400')
    const aes = await device.create('AES256')
    t.equal(
      (await device.post('crypto/hmac/hash', aes.use, { kid: aes.kid, msg: b64(msg) })).status,
      406,
      'an AES key → 406',
    )
  })

  await t.test('statuses and journal records', async (t) => {
    const key = await device.create('SHA3-256')
    const valid = { kid: key.kid, msg: b64(msg) }
    await device.checkOutcomes(t, 'crypto/hmac/hash', LogType.CRYPTO_HMAC_HASH, key, {
      valid,
      malformed: { ...valid, msg: 'not base64!' },
      failing: { ...valid, pubkey: b64(hostPeer('CURVE25519').publicKey) },
    })
    const mac = (await device.post('crypto/hmac/hash', key.use, valid)).json.mac as string
    await device.checkOutcomes(t, 'crypto/hmac/verify', LogType.CRYPTO_HMAC_VERIFY, key, {
      valid: { ...valid, mac },
      malformed: { ...valid, mac: 'not base64!' },
      failing: { ...valid, mac: b64(flipped(bytesOf(mac))) },
    })
    const long = await device.post('crypto/hmac/verify', key.use, { ...valid, mac: b64(Buffer.alloc(65)) })
    t.equal(long.status, 406, 'a MAC longer than any digest is well-formed: it merely does not verify (406)')
    await device.failState(t, 'crypto/hmac/hash', LogType.CRYPTO_HMAC_HASH, key, valid)
  })
})
