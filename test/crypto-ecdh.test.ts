// POST /api/crypto/ecdh (crypto-contract §3, §4) against a real device, checked with node:crypto:
// without alg the secret's first 32 bytes on every curve, with alg that digest of the whole secret.
import { createECDH, createHash } from 'node:crypto'
import t from 'tap'
import { LogType } from '../protocol/journal.js'
import { CryptoDevice, DIGESTS, ECDH_CURVES, hostPeer } from './helpers/crypto-device.js'
import { b64, bytesOf } from './helpers/keys.js'

t.test('ECDH', async (t) => {
  const device = await CryptoDevice.boot(t)

  await t.test('every curve, with pubkey and with ext_kid, raw and digested, as node:crypto agrees', async (t) => {
    for (const curve of ECDH_CURVES) {
      const key = await device.create(curve)
      const host = hostPeer(curve)
      const secret = host.agree(key.pubkey!)
      const raw = await device.post('crypto/ecdh', key.use, { kid: key.kid, pubkey: b64(host.publicKey) })
      t.equal(raw.status, 200, `${curve}: pubkey`)
      t.same(bytesOf(raw.json.ecdh), secret.subarray(0, 32), `${curve}: the first 32 bytes of the secret`)
      const peer = await device.import(curve, host.publicKey)
      const stored = await device.post('crypto/ecdh', key.use, { kid: key.kid, ext_kid: peer.kid })
      t.same(stored.json, raw.json, `${curve}: ext_kid gives the same`)
      for (const [alg, digest] of Object.entries(DIGESTS)) {
        const answer = await device.post('crypto/ecdh', key.use, { kid: key.kid, ext_kid: peer.kid, alg })
        t.same(bytesOf(answer.json.ecdh), createHash(digest).update(secret).digest(), `${curve} ${alg}`)
      }
    }
  })

  await t.test('no peer, a peer of another curve, a key that cannot agree: 406', async (t) => {
    const x25519 = await device.create('CURVE25519')
    const p256 = await device.create('SECP256R1', { mode: 'ECDH,ExDSA' })
    const signing = await device.create('SECP256R1', { mode: 'ExDSA' })
    const ed = await device.create('ED25519')
    const cases: [string, typeof x25519, Record<string, unknown>][] = [
      ['no peer', x25519, {}],
      ['an X448 pubkey for an X25519 key', x25519, { pubkey: b64(hostPeer('CURVE448').publicKey) }],
      ['a P-384 pubkey for a P-256 key', p256, { pubkey: b64(hostPeer('SECP384R1').publicKey) }],
      ['an ext_kid of another curve', x25519, { ext_kid: p256.kid }],
      ['an unknown ext_kid', x25519, { ext_kid: 'ab'.repeat(16) }],
      ['a point not on the curve', p256, { pubkey: b64(Buffer.concat([Buffer.from([2]), Buffer.alloc(32, 0xff)])) }],
      ["a pubkey longer than any curve's", p256, { pubkey: b64(Buffer.alloc(134, 4)) }],
      ['an X25519 pubkey of 33 bytes', x25519, { pubkey: b64(Buffer.alloc(33, 9)) }],
      ['a SECP key without the ECDH flag', signing, { pubkey: b64(hostPeer('SECP256R1').publicKey) }],
      ['an Ed25519 key', ed, { pubkey: b64(hostPeer('CURVE25519').publicKey) }],
    ]
    for (const [what, key, body] of cases) {
      const answer = await device.post('crypto/ecdh', key.use, { kid: key.kid, ...body })
      t.equal(answer.status, 406, what)
    }
    const both = await device.post('crypto/ecdh', p256.use, {
      kid: p256.kid,
      pubkey: b64(hostPeer('SECP256R1').publicKey),
    })
    t.equal(both.status, 200, 'a SECP key with both flags agrees')
    // Lenient (docs/api.md): uncompressed SEC1 is taken too, and agrees as its compressed form does.
    const peer = createECDH('prime256v1')
    peer.generateKeys()
    const agree = (form: 'compressed' | 'uncompressed') =>
      device.post('crypto/ecdh', p256.use, { kid: p256.kid, pubkey: b64(peer.getPublicKey(null, form)) })
    const compressed = await agree('compressed')
    const uncompressed = await agree('uncompressed')
    t.same([uncompressed.status, uncompressed.json?.ecdh], [200, compressed.json.ecdh], 'an uncompressed SEC1 pubkey')
  })

  await t.test('statuses and journal records', async (t) => {
    const key = await device.create('CURVE448')
    const valid = { kid: key.kid, pubkey: b64(hostPeer('CURVE448').publicKey) }
    await device.checkOutcomes(t, 'crypto/ecdh', LogType.CRYPTO_ECDH, key, {
      valid,
      malformed: { ...valid, alg: 'SHA-256' },
      failing: { kid: key.kid },
    })
    await device.failState(t, 'crypto/ecdh', LogType.CRYPTO_ECDH, key, valid)
  })
})
