// POST /api/crypto/pqc/mlkem/encaps|decaps and /api/crypto/pqc/mldsa/sign|verify (crypto-contract
// §3, §4) against a real device, crossed with @noble/post-quantum on the host both ways.
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js'
import { ml_kem512, ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js'
import t from 'tap'
import { LogType } from '../protocol/journal.js'
import { CryptoDevice, flipped } from './helpers/crypto-device.js'
import { api, b64, bytesOf } from './helpers/keys.js'

const ML_KEM = { MLKEM512: ml_kem512, MLKEM768: ml_kem768, MLKEM1024: ml_kem1024 } as const
const ML_DSA = {
  MLDSA44: { dsa: ml_dsa44, signature: 2420 },
  MLDSA65: { dsa: ml_dsa65, signature: 3309 },
  MLDSA87: { dsa: ml_dsa87, signature: 4627 },
} as const
const msg = Buffer.from('a post-quantum message')
const ctx = Buffer.from('pq context')

t.test('post-quantum keys', async (t) => {
  const device = await CryptoDevice.boot(t)

  await t.test('ML-KEM: host encaps, device decaps; device encaps, host decaps', async (t) => {
    for (const [variant, kem] of Object.entries(ML_KEM)) {
      const key = await device.create(variant)
      const hostSide = kem.encapsulate(key.pubkey!)
      const decaps = await device.post('crypto/pqc/mlkem/decaps', key.use, {
        kid: key.kid,
        ct: b64(hostSide.cipherText),
      })
      t.equal(decaps.status, 200, `${variant}: decaps`)
      t.same(decaps.json, { alg: variant, ss: b64(hostSide.sharedSecret) }, `${variant}: the host's shared secret`)

      const pair = kem.keygen()
      const imported = await device.import(variant, pair.publicKey)
      const encaps = await device.post('crypto/pqc/mlkem/encaps', imported.use, { kid: imported.kid })
      t.equal(encaps.status, 200, `${variant}: encaps with an imported public key`)
      t.equal(encaps.json.alg, variant)
      t.same(
        kem.decapsulate(bytesOf(encaps.json.ct), pair.secretKey),
        bytesOf(encaps.json.ss),
        `${variant}: the host decapsulates the device's ciphertext`,
      )

      const own = await device.post('crypto/pqc/mlkem/encaps', key.use, { kid: key.kid })
      const back = await device.post('crypto/pqc/mlkem/decaps', key.use, { kid: key.kid, ct: own.json.ct })
      t.equal(back.json.ss, own.json.ss, `${variant}: the device's own round trip`)
      const changed = await device.post('crypto/pqc/mlkem/decaps', key.use, {
        kid: key.kid,
        ct: b64(flipped(bytesOf(own.json.ct))),
      })
      t.equal(changed.status, 200, `${variant}: a changed ciphertext decapsulates (implicit rejection)`)
      t.not(changed.json.ss, own.json.ss, `${variant}: to another secret`)
      const short = await device.post('crypto/pqc/mlkem/decaps', key.use, {
        kid: key.kid,
        ct: b64(bytesOf(own.json.ct).subarray(1)),
      })
      t.equal(short.status, 406, `${variant}: a ciphertext of the wrong length → 406`)
      const publicOnly = await device.post('crypto/pqc/mlkem/decaps', imported.use, {
        kid: imported.kid,
        ct: own.json.ct,
      })
      t.equal(publicOnly.status, 406, `${variant}: an imported public key does not decapsulate`)
    }
    const aes = await device.create('AES128')
    t.equal((await device.post('crypto/pqc/mlkem/encaps', aes.use, { kid: aes.kid })).status, 406, 'an AES key')
  })

  await t.test('ML-DSA: device signs, host verifies; host signs, device verifies', async (t) => {
    for (const [variant, { dsa, signature: length }] of Object.entries(ML_DSA)) {
      const key = await device.create(variant)
      const signed = await device.post('crypto/pqc/mldsa/sign', key.use, { kid: key.kid, msg: b64(msg), ctx: b64(ctx) })
      t.equal(signed.status, 200, `${variant}: sign`)
      t.equal(signed.json.alg, variant)
      const signature = bytesOf(signed.json.sign)
      t.equal(signature.length, length, `${variant}: ${length} bytes`)
      t.ok(dsa.verify(signature, msg, key.pubkey!, { context: ctx }), `${variant}: noble verifies`)
      t.notOk(dsa.verify(signature, msg, key.pubkey!), `${variant}: under its context only`)
      const plain = await device.post('crypto/pqc/mldsa/sign', key.use, { kid: key.kid, msg: b64(msg) })
      t.ok(dsa.verify(bytesOf(plain.json.sign), msg, key.pubkey!), `${variant}: the default context is empty`)

      const pair = dsa.keygen()
      const imported = await device.import(variant, pair.publicKey)
      const hostSignature = dsa.sign(msg, pair.secretKey, { context: ctx })
      const body = { kid: imported.kid, msg: b64(msg), ctx: b64(ctx), sign: b64(hostSignature) }
      const verified = await device.post('crypto/pqc/mldsa/verify', imported.use, body)
      t.equal(verified.status, 200, `${variant}: the device verifies the host's signature`)
      t.equal(verified.text, '', `${variant}: with an empty body`)
      for (const [what, tampered] of [
        ['signature', { ...body, sign: b64(flipped(hostSignature, 100)) }],
        ['message', { ...body, msg: b64(flipped(msg)) }],
        ['context', { ...body, ctx: b64(flipped(ctx)) }],
      ] as const) {
        const answer = await device.post('crypto/pqc/mldsa/verify', imported.use, tampered)
        t.equal(answer.status, 406, `${variant}: a flipped bit of the ${what} → 406`)
      }
      const publicOnly = await device.post('crypto/pqc/mldsa/sign', imported.use, { kid: imported.kid, msg: b64(msg) })
      t.equal(publicOnly.status, 406, `${variant}: an imported public key does not sign`)
    }
  })

  await t.test('a deleted key is gone for its operations too', async (t) => {
    const key = await device.create('MLDSA44')
    t.equal((await device.post('crypto/pqc/mldsa/sign', key.use, { kid: key.kid, msg: b64(msg) })).status, 200)
    const deleted = await api(
      `${device.o.https}/api/keymgmt/delete/${key.kid}`,
      await device.tokens.get('keymgmt:del'),
      undefined,
      'DELETE',
    )
    t.equal(deleted.status, 200)
    const after = await device.post('crypto/pqc/mldsa/sign', key.use, { kid: key.kid, msg: b64(msg) })
    t.equal(after.status, 406, 'sign after the delete → 406')
  })

  await t.test('statuses and journal records', async (t) => {
    const kem = await device.create('MLKEM512')
    const ct = (await device.post('crypto/pqc/mlkem/encaps', kem.use, { kid: kem.kid })).json.ct as string
    await device.checkOutcomes(t, 'crypto/pqc/mlkem/decaps', LogType.CRYPTO_MLKEM_DECAPS, kem, {
      valid: { kid: kem.kid, ct },
      malformed: { kid: kem.kid },
      failing: { kid: kem.kid, ct: b64(Buffer.alloc(767)) },
    })
    const long = await device.post('crypto/pqc/mlkem/decaps', kem.use, { kid: kem.kid, ct: b64(Buffer.alloc(2049)) })
    t.equal(long.status, 406, 'a ct longer than any variant is well-formed: the wrong length is a 406')
    const dsa = await device.create('MLDSA65')
    const valid = { kid: dsa.kid, msg: b64(msg) }
    const sign = (await device.post('crypto/pqc/mldsa/sign', dsa.use, valid)).json.sign as string
    await device.checkOutcomes(t, 'crypto/pqc/mldsa/verify', LogType.CRYPTO_MLDSA_VERIFY, dsa, {
      valid: { ...valid, sign },
      malformed: { ...valid, sign, ctx: b64(Buffer.alloc(256)) },
      failing: { ...valid, sign, ctx: b64(ctx) },
    })
    const longSign = await device.post('crypto/pqc/mldsa/verify', dsa.use, { ...valid, sign: b64(Buffer.alloc(5001)) })
    t.equal(longSign.status, 406, 'a signature longer than any variant is well-formed: it does not verify (406)')
    await device.failState(t, 'crypto/pqc/mlkem/encaps', LogType.CRYPTO_MLKEM_ENCAPS, kem, { kid: kem.kid })
  })
})
