// Differential tests of digests, HMAC and RFC 3394 key wrap: on seeded random inputs, both
// engines give the same bytes, unwrap each other's output, and refuse a tampered wrap alike.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import t from 'tap'
import { AuthenticationError, nativeEngine as native, nobleEngine as noble, type Digest } from '../hal/crypto/index.js'
import { bytes, check, hex, outcome } from './helpers/engine-properties.js'

const DIGESTS: Digest[] = ['SHA2-256', 'SHA2-384', 'SHA2-512', 'SHA3-256', 'SHA3-384', 'SHA3-512']
const RUNS = 100

for (const digest of DIGESTS) {
  t.test(`${digest}: digest and HMAC agree, keys shorter and longer than a block`, async (t) => {
    const property = fc.property(bytes(0, 200), bytes(0, 400), (key, message) => {
      assert.equal(hex(noble.digest(digest, message)), hex(native.digest(digest, message)))
      assert.equal(hex(noble.hmac(digest, key, message)), hex(native.hmac(digest, key, message)))
    })
    check(t, RUNS, property)
  })
}

const kek = fc.constantFrom(16, 24, 32).chain((length) => bytes(length))
const keyData = fc.integer({ min: 2, max: 8 }).chain((semiblocks) => bytes(8 * semiblocks))
const iv = fc.option(bytes(8), { nil: undefined })

t.test('key wrap: byte-equal, each unwraps the other, with and without an IV', async (t) => {
  const property = fc.property(kek, keyData, iv, (kek, data, iv) => {
    const wrapped = native.aesKeyWrap(kek, data, iv)
    assert.equal(wrapped.length, data.length + 8)
    assert.equal(hex(noble.aesKeyWrap(kek, data, iv)), hex(wrapped))
    assert.equal(hex(noble.aesKeyUnwrap(kek, wrapped, iv)), hex(data))
    assert.equal(hex(native.aesKeyUnwrap(kek, wrapped, iv)), hex(data))
  })
  check(t, RUNS, property)
})

t.test('key unwrap: any flipped bit, or another IV, is an AuthenticationError on both', async (t) => {
  const property = fc.property(kek, keyData, iv, fc.nat(), (kek, data, iv, position) => {
    const wrapped = native.aesKeyWrap(kek, data, iv)
    const tampered = Uint8Array.from(wrapped)
    const bit = position % (8 * wrapped.length)
    tampered[bit >> 3] = tampered[bit >> 3]! ^ (1 << (bit & 7))
    const otherIv = iv === undefined ? new Uint8Array(8) : undefined
    for (const engine of [native, noble]) {
      assert.equal(
        outcome(() => engine.aesKeyUnwrap(kek, tampered, iv)),
        AuthenticationError.name,
      )
      assert.equal(
        outcome(() => engine.aesKeyUnwrap(kek, wrapped, otherIv)),
        AuthenticationError.name,
      )
    }
  })
  check(t, RUNS, property)
})
