// Differential tests: on seeded random inputs, native and noble must give the same bytes or
// the same named error. fast-check's fixed seeds make every run the same run.
import { ECDH } from 'node:crypto'
import assert from 'node:assert/strict'
import { p256, p384, p521 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import fc from 'fast-check'
import t from 'tap'
import { CURVES, ECDH_CURVES } from '../hal/crypto/curves.js'
import { nativeEngine as native, nobleEngine as noble, type Curve } from '../hal/crypto/index.js'
import { bytes, check, hex, outcome, seededRandom } from './helpers/engine-properties.js'

const RUNS = 200

const SEC = {
  SECP256R1: { noble: p256, openssl: 'prime256v1' },
  SECP384R1: { noble: p384, openssl: 'secp384r1' },
  SECP521R1: { noble: p521, openssl: 'secp521r1' },
  SECP256K1: { noble: secp256k1, openssl: 'secp256k1' },
}
type SecCurve = keyof typeof SEC
const isSec = (curve: Curve): curve is SecCurve => curve in SEC
// A noble scalar multiplication costs 1.5 ms (X25519) to 9 ms (P-521) here, so the slow
// curves get fewer cases; each case still crosses both engines in both directions.
const ECDH_RUNS: Record<Curve, number> = {
  CURVE25519: 60,
  CURVE448: 20,
  SECP256R1: 40,
  SECP384R1: 15,
  SECP521R1: 12,
  SECP256K1: 40,
}

const aesKey = fc.constantFrom(16, 24, 32).chain((length) => bytes(length))
const aad = fc.option(bytes(0, 64), { nil: undefined })

/** SEC1 uncompressed form, computed by OpenSSL and by noble, which must agree. */
function uncompressed(curve: SecCurve, publicKey: Uint8Array): Uint8Array {
  const openssl = ECDH.convertKey(publicKey, SEC[curve].openssl, undefined, undefined, 'uncompressed') as Buffer
  assert.equal(hex(SEC[curve].noble.Point.fromBytes(publicKey).toBytes(false)), hex(openssl))
  return openssl
}

t.test('ECB: all key sizes, 0 to 6 blocks', async (t) => {
  const data = fc.integer({ min: 0, max: 6 }).chain((blocks) => bytes(16 * blocks))
  const property = fc.property(aesKey, data, (key, data) => {
    const ciphertext = native.aesEcbEncrypt(key, data)
    assert.equal(hex(noble.aesEcbEncrypt(key, data)), hex(ciphertext))
    assert.equal(hex(native.aesEcbDecrypt(key, ciphertext)), hex(data))
    assert.equal(hex(noble.aesEcbDecrypt(key, ciphertext)), hex(data))
  })
  check(t, RUNS, property)
})

t.test('CBC: all key sizes, empty and unaligned plaintexts, each decrypts the other', async (t) => {
  const property = fc.property(aesKey, bytes(16), bytes(0, 100), (key, iv, data) => {
    const before = hex(data)
    const ciphertext = native.aesCbcEncrypt(key, iv, data)
    const other = noble.aesCbcEncrypt(key, iv, data)
    assert.equal(hex(other), hex(ciphertext))
    assert.equal(hex(noble.aesCbcDecrypt(key, iv, ciphertext)), before)
    assert.equal(hex(native.aesCbcDecrypt(key, iv, other)), before)
    assert.equal(hex(data), before, 'inputs are not modified')
  })
  check(t, RUNS, property)
})

t.test('CBC: near-valid paddings are accepted or refused alike, as PKCS#7 says', async (t) => {
  const body = fc.integer({ min: 0, max: 3 }).chain((blocks) => bytes(16 * blocks))
  const padValue = fc.integer({ min: 0, max: 17 })
  const run = fc.integer({ min: 1, max: 16 })
  const blocks = [aesKey, bytes(16), body, bytes(16), padValue, run] as const
  const property = fc.property(...blocks, (key, iv, body, last, value, length) => {
    last.fill(value, 16 - length)
    const valid = value >= 1 && value <= 16 && last.subarray(16 - value).every((byte) => byte === value)
    const plaintext = Uint8Array.of(...body, ...last)
    // Encrypting whole blocks appends a padding block; without it, `last` is the final block.
    const ciphertext = native.aesCbcEncrypt(key, iv, plaintext).subarray(0, plaintext.length)
    const expected = valid ? hex(plaintext.subarray(0, plaintext.length - value)) : 'CipherError'
    assert.equal(
      outcome(() => native.aesCbcDecrypt(key, iv, ciphertext)),
      expected,
    )
    assert.equal(
      outcome(() => noble.aesCbcDecrypt(key, iv, ciphertext)),
      expected,
    )
  })
  check(t, RUNS, property)
})

t.test('GCM: all key sizes, 16-byte and other nonces, with and without aad', async (t) => {
  const nonce = fc.oneof({ arbitrary: bytes(16), weight: 3 }, { arbitrary: bytes(12, 64), weight: 1 })
  const property = fc.property(aesKey, nonce, bytes(0, 100), aad, (key, nonce, plaintext, aad) => {
    const before = hex(plaintext)
    const sealed = native.aesGcmEncrypt(key, nonce, plaintext, aad)
    const other = noble.aesGcmEncrypt(key, nonce, plaintext, aad)
    assert.equal(hex(other.ciphertext), hex(sealed.ciphertext))
    assert.equal(hex(other.tag), hex(sealed.tag))
    assert.equal(hex(noble.aesGcmDecrypt(key, nonce, sealed.ciphertext, sealed.tag, aad)), before)
    assert.equal(hex(native.aesGcmDecrypt(key, nonce, other.ciphertext, other.tag, aad)), before)
    assert.equal(hex(plaintext), before, 'inputs are not modified')
  })
  check(t, RUNS, property)
})

t.test('GCM: one flipped bit anywhere is an AuthenticationError on both', async (t) => {
  const target = fc.constantFrom('ciphertext', 'tag', 'aad', 'nonce')
  const bit = fc.integer({ min: 0, max: 7 })
  const property = fc.property(
    aesKey,
    bytes(16),
    bytes(1, 64),
    bytes(1, 32),
    target,
    fc.nat(),
    bit,
    (key, nonce, plaintext, aad, target, at, bit) => {
      const { ciphertext, tag } = native.aesGcmEncrypt(key, nonce, plaintext, aad)
      const inputs = { ciphertext, tag, aad, nonce }
      const flipped = Uint8Array.from(inputs[target])
      flipped[at % flipped.length]! ^= 1 << bit
      const forged = { ...inputs, [target]: flipped }
      for (const engine of [native, noble]) {
        const open = () => engine.aesGcmDecrypt(key, forged.nonce, forged.ciphertext, forged.tag, forged.aad)
        assert.equal(outcome(open), 'AuthenticationError', `${engine.name}, ${target}`)
      }
    },
  )
  check(t, RUNS, property)
})

for (const curve of ECDH_CURVES) {
  t.test(`ECDH ${curve}: each engine uses the keys the other generates`, async (t) => {
    const property = fc.property(bytes(32), bytes(32), fc.boolean(), (seedA, seedB, expand) => {
      const alice = native.generateKeyPair(curve, seededRandom(seedA))
      const bob = noble.generateKeyPair(curve, seededRandom(seedB))
      assert.deepEqual(noble.generateKeyPair(curve, seededRandom(seedA)), alice, 'same random, same key pair')
      // Public keys as generated (raw or compressed), or SEC1 uncompressed in about half the cases.
      const [alicePublic, bobPublic] =
        expand && isSec(curve)
          ? [uncompressed(curve, alice.publicKey), uncompressed(curve, bob.publicKey)]
          : [alice.publicKey, bob.publicKey]
      const shared = native.ecdh(curve, alice.privateKey, bobPublic)
      assert.equal(shared.length, CURVES[curve].size)
      assert.equal(hex(noble.ecdh(curve, bob.privateKey, alicePublic)), hex(shared))
    })
    check(t, ECDH_RUNS[curve], property)
  })
}

t.test('ECDH: arbitrary X25519/X448 u-coordinates, valid or not, get the same answer', async (t) => {
  for (const curve of ['CURVE25519', 'CURVE448'] as const) {
    const { size } = CURVES[curve]
    const property = fc.property(bytes(size), bytes(size), (privateKey, peer) => {
      const answer = outcome(() => native.ecdh(curve, privateKey, peer))
      assert.match(answer, /^([0-9a-f]+|CryptoInputError)$/)
      assert.equal(
        outcome(() => noble.ecdh(curve, privateKey, peer)),
        answer,
      )
    })
    check(t, ECDH_RUNS[curve], property)
  }
})

t.test('ECDH: arbitrary compressed x-coordinates are points on both or on neither', async (t) => {
  for (const curve of Object.keys(SEC) as SecCurve[]) {
    const { size } = CURVES[curve]
    const key = native.generateKeyPair(curve, seededRandom(new Uint8Array(32))).privateKey
    let valid = 0
    const property = fc.property(fc.constantFrom(2, 3), bytes(size), (prefix, x) => {
      // The top byte of a P-521 x has one significant bit; unmasked, nearly every x is >= p.
      if (curve === 'SECP521R1') x[0] = x[0]! & 0x01
      const peer = Uint8Array.of(prefix, ...x)
      const answer = outcome(() => native.ecdh(curve, key, peer))
      assert.match(answer, /^([0-9a-f]+|CryptoInputError)$/)
      assert.equal(
        outcome(() => noble.ecdh(curve, key, peer)),
        answer,
      )
      if (answer !== 'CryptoInputError') valid++
    })
    check(t, ECDH_RUNS[curve], property)
    t.ok(valid > 0 && valid < ECDH_RUNS[curve], `${curve}: ${valid} points on the curve, the rest refused`)
  }
})

t.test('HKDF-SHA256: random ikm, salt or none, info, length', async (t) => {
  const salt = fc.option(bytes(0, 80), { nil: undefined })
  const length = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 8160 }))
  const property = fc.property(bytes(0, 80), salt, bytes(0, 80), length, (ikm, salt, info, length) => {
    const okm = native.hkdfSha256(ikm, salt, info, length)
    assert.equal(okm.length, length)
    assert.equal(hex(noble.hkdfSha256(ikm, salt, info, length)), hex(okm))
  })
  check(t, RUNS, property)
})
