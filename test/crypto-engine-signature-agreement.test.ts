// Differential tests of the signature primitives: on seeded random inputs, an ECDSA signature of
// either engine verifies on the other (OpenSSL's nonces are random, so the bytes differ), EdDSA
// signatures are byte-equal (RFC 8032 is deterministic), and both derive the same public keys.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import t from 'tap'
import { ECDH_CURVES } from '../hal/crypto/curves.js'
import {
  nativeEngine as native,
  nobleEngine as noble,
  type Curve,
  type EcdsaDigest,
  type EdAlgorithm,
  type SecCurve,
} from '../hal/crypto/index.js'
import { bytes, check, hex, seededRandom } from './helpers/engine-properties.js'

const SEC_CURVES: SecCurve[] = ['SECP256R1', 'SECP384R1', 'SECP521R1', 'SECP256K1']
const ECDSA_DIGESTS: EcdsaDigest[] = ['SHA2-256', 'SHA2-384', 'SHA2-512']
// noble's P-521 costs about 10 ms a signature here, so each pair gets few cases.
const ECDSA_RUNS = 6

for (const curve of SEC_CURVES) {
  for (const digest of ECDSA_DIGESTS) {
    t.test(`ECDSA ${curve} ${digest}: each engine verifies the other's signatures`, async (t) => {
      const property = fc.property(bytes(32), bytes(0, 300), (seed, message) => {
        const { privateKey, publicKey } = native.generateKeyPair(curve, seededRandom(seed))
        for (const [signer, verifier] of [
          [native, noble],
          [noble, native],
        ] as const) {
          const signature = signer.ecdsaSign(curve, privateKey, digest, message)
          assert.equal(signature[0], 0x30, 'a DER SEQUENCE')
          assert.ok(verifier.ecdsaVerify(curve, publicKey, digest, message, signature), `${signer.name} signed`)
          assert.ok(signer.ecdsaVerify(curve, publicKey, digest, message, signature))
        }
      })
      check(t, ECDSA_RUNS, property)
    })
  }
}

t.test('ECDSA: a signature under one digest does not verify under another', async (t) => {
  const { privateKey, publicKey } = native.generateKeyPair('SECP256R1', seededRandom(new Uint8Array(32)))
  const message = new TextEncoder().encode('hemd')
  const signature = native.ecdsaSign('SECP256R1', privateKey, 'SHA2-256', message)
  for (const engine of [native, noble]) {
    t.ok(engine.ecdsaVerify('SECP256R1', publicKey, 'SHA2-256', message, signature), engine.name)
    t.notOk(engine.ecdsaVerify('SECP256R1', publicKey, 'SHA2-384', message, signature), engine.name)
  }
})

const PUBLIC_KEY_RUNS: Record<Curve, number> = {
  CURVE25519: 40,
  CURVE448: 15,
  SECP256R1: 30,
  SECP384R1: 15,
  SECP521R1: 10,
  SECP256K1: 30,
}

for (const curve of ECDH_CURVES) {
  t.test(`publicKey ${curve}: both engines derive the key generateKeyPair gives`, async (t) => {
    const property = fc.property(bytes(32), (seed) => {
      const pair = noble.generateKeyPair(curve, seededRandom(seed))
      assert.equal(hex(native.publicKey(curve, pair.privateKey)), hex(pair.publicKey))
      assert.equal(hex(noble.publicKey(curve, pair.privateKey)), hex(pair.publicKey))
    })
    check(t, PUBLIC_KEY_RUNS[curve], property)
  })
}

const ED: Record<EdAlgorithm, { seed: number; runs: number; needsContext: boolean }> = {
  Ed25519: { seed: 32, runs: 30, needsContext: false },
  Ed25519ctx: { seed: 32, runs: 20, needsContext: true },
  Ed25519ph: { seed: 32, runs: 20, needsContext: false },
  Ed448: { seed: 57, runs: 15, needsContext: false },
  Ed448ph: { seed: 57, runs: 10, needsContext: false },
}

for (const [algorithm, { seed: seedLength, runs, needsContext }] of Object.entries(ED) as [
  EdAlgorithm,
  (typeof ED)[EdAlgorithm],
][]) {
  t.test(`${algorithm}: byte-equal signatures and public keys, each verifies the other's`, async (t) => {
    // Ed448 with an empty context takes OpenSSL's path in the native engine, with one noble's.
    const context = fc.oneof(bytes(needsContext ? 1 : 0, 255), bytes(needsContext ? 1 : 0))
    const property = fc.property(bytes(seedLength), bytes(0, 300), context, (seed, message, context) => {
      const curve = algorithm.startsWith('Ed448') ? 'ED448' : 'ED25519'
      const publicKey = native.eddsaPublicKey(curve, seed)
      assert.equal(hex(noble.eddsaPublicKey(curve, seed)), hex(publicKey))
      const signature = native.eddsaSign(algorithm, seed, message, context)
      assert.equal(hex(noble.eddsaSign(algorithm, seed, message, context)), hex(signature))
      assert.ok(noble.eddsaVerify(algorithm, publicKey, message, signature, context))
      assert.ok(native.eddsaVerify(algorithm, publicKey, message, signature, context))
    })
    check(t, runs, property)
  })
}

t.test('Ed25519 ignores a context, as the device ignores `ctx` there', async (t) => {
  const seed = new Uint8Array(32).fill(7)
  const message = new TextEncoder().encode('hemd')
  for (const engine of [native, noble]) {
    const plain = engine.eddsaSign('Ed25519', seed, message, new Uint8Array(0))
    t.equal(hex(engine.eddsaSign('Ed25519', seed, message, new Uint8Array([1, 2, 3]))), hex(plain), engine.name)
  }
})

t.test('a context changes the signature: Ed448 with one is not Ed448 without', async (t) => {
  const seed = new Uint8Array(57).fill(7)
  const message = new TextEncoder().encode('hemd')
  const publicKey = native.eddsaPublicKey('ED448', seed)
  for (const engine of [native, noble]) {
    const signature = engine.eddsaSign('Ed448', seed, message, new Uint8Array([1]))
    t.ok(engine.eddsaVerify('Ed448', publicKey, message, signature, new Uint8Array([1])), engine.name)
    t.notOk(engine.eddsaVerify('Ed448', publicKey, message, signature, new Uint8Array(0)), engine.name)
  }
})
