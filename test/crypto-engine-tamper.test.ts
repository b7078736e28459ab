// Every verify answers false, never throws, for a flipped bit in the signature or the message,
// a malformed signature, or a public key that is not a point: on both engines and for ML-DSA.
import fc from 'fast-check'
import t from 'tap'
import {
  nativeEngine,
  nobleEngine,
  postQuantum as pq,
  type EdAlgorithm,
  type MlDsaVariant,
  type SecCurve,
} from '../hal/crypto/index.js'
import { SEED, seededRandom } from './helpers/engine-properties.js'

const ENGINES = [nativeEngine, nobleEngine]
const message = new TextEncoder().encode('hemd tamper test')
const RUNS = 8

/** `data` with bit `position` (taken modulo its length in bits) flipped. */
function flip(data: Uint8Array, position: number): Uint8Array {
  const copy = Uint8Array.from(data)
  const bit = position % (8 * data.length)
  copy[bit >> 3] = copy[bit >> 3]! ^ (1 << (bit & 7))
  return copy
}

/** The bit positions tried: the first and last bits, and seeded random ones. */
function positions(length: number): number[] {
  return [0, 8 * length - 1, ...fc.sample(fc.nat({ max: 8 * length - 1 }), { seed: SEED, numRuns: RUNS })]
}

for (const curve of ['SECP256R1', 'SECP384R1', 'SECP521R1', 'SECP256K1'] as SecCurve[]) {
  t.test(`ECDSA ${curve}: flipped bits, malformed DER and off-curve keys are false`, async (t) => {
    const { privateKey, publicKey } = nativeEngine.generateKeyPair(curve, seededRandom(Buffer.from(curve)))
    const signature = nativeEngine.ecdsaSign(curve, privateKey, 'SHA2-256', message)
    const notAPoint = Uint8Array.from(publicKey)
    notAPoint[notAPoint.length - 1] = notAPoint.at(-1)! ^ 0x01
    for (const e of ENGINES) {
      const verify = (key: Uint8Array, data: Uint8Array, sig: Uint8Array) =>
        e.ecdsaVerify(curve, key, 'SHA2-256', data, sig)
      t.ok(verify(publicKey, message, signature), `${e.name}: the signature verifies`)
      const flipped = positions(signature.length).filter((p) => verify(publicKey, message, flip(signature, p)))
      t.same(flipped, [], `${e.name}: no flipped signature bit verifies`)
      t.notOk(verify(publicKey, flip(message, 3), signature), `${e.name}: a flipped message bit`)
      t.notOk(verify(publicKey, message, signature.subarray(0, signature.length - 1)), `${e.name}: truncated DER`)
      t.notOk(verify(publicKey, message, Uint8Array.of(...signature, 0)), `${e.name}: a trailing byte`)
      t.notOk(verify(publicKey, message, new Uint8Array(0)), `${e.name}: an empty signature`)
      // Flipping the last bit of x leaves a point on the curve about half the time; either way it must be false.
      t.notOk(verify(notAPoint, message, signature), `${e.name}: another or no point`)
    }
  })
}

const ED: [EdAlgorithm, number, Uint8Array][] = [
  ['Ed25519', 32, new Uint8Array(0)],
  ['Ed25519ctx', 32, Uint8Array.of(1, 2)],
  ['Ed25519ph', 32, new Uint8Array(0)],
  ['Ed448', 57, new Uint8Array(0)],
  ['Ed448', 57, Uint8Array.of(1, 2)],
  ['Ed448ph', 57, Uint8Array.of(3)],
]

for (const [algorithm, size, context] of ED) {
  t.test(`${algorithm}, context of ${context.length} bytes: tampering is false`, async (t) => {
    const seed = new Uint8Array(size).fill(0x42)
    const curve = size === 32 ? 'ED25519' : 'ED448'
    const publicKey = nativeEngine.eddsaPublicKey(curve, seed)
    const signature = nativeEngine.eddsaSign(algorithm, seed, message, context)
    // y = 2 is not on edwards25519 nor on edwards448.
    const notAPoint = new Uint8Array(size)
    notAPoint[0] = 2
    for (const e of ENGINES) {
      const verify = (key: Uint8Array, data: Uint8Array, sig: Uint8Array, ctx = context) =>
        e.eddsaVerify(algorithm, key, data, sig, ctx)
      t.ok(verify(publicKey, message, signature), `${e.name}: the signature verifies`)
      const flipped = positions(signature.length).filter((p) => verify(publicKey, message, flip(signature, p)))
      t.same(flipped, [], `${e.name}: no flipped signature bit verifies`)
      t.notOk(verify(publicKey, flip(message, 5), signature), `${e.name}: a flipped message bit`)
      t.notOk(verify(flip(publicKey, 9), message, signature), `${e.name}: a flipped public key bit`)
      t.notOk(verify(notAPoint, message, signature), `${e.name}: a public key that is not a point`)
      t.notOk(verify(publicKey, message, signature.subarray(1)), `${e.name}: a short signature`)
      // Pure Ed25519 has no context to change (it ignores one).
      if (algorithm !== 'Ed25519')
        t.notOk(verify(publicKey, message, signature, Uint8Array.of(...context, 0)), `${e.name}: another context`)
    }
  })
}

for (const variant of ['MLDSA44', 'MLDSA65', 'MLDSA87'] as MlDsaVariant[]) {
  t.test(`${variant}: tampering and malformed inputs are false`, async (t) => {
    const { publicKey, secretKey } = pq.mlDsaKeyPair(variant, new Uint8Array(32).fill(7))
    const context = Uint8Array.of(1)
    const signature = pq.mlDsaSign(variant, secretKey, message, context, (n) => new Uint8Array(n).fill(1))
    const verify = (key: Uint8Array, data: Uint8Array, sig: Uint8Array, ctx = context) =>
      pq.mlDsaVerify(variant, key, data, sig, ctx)
    t.ok(verify(publicKey, message, signature), 'the signature verifies')
    const flipped = positions(signature.length).filter((p) => verify(publicKey, message, flip(signature, p)))
    t.same(flipped, [], 'no flipped signature bit verifies')
    t.notOk(verify(publicKey, flip(message, 1), signature), 'a flipped message bit')
    t.notOk(verify(flip(publicKey, 100), message, signature), 'a flipped public key bit')
    t.notOk(verify(publicKey, message, signature, new Uint8Array(0)), 'another context')
    t.notOk(verify(publicKey, message, signature.subarray(1)), 'a short signature')
    t.notOk(verify(publicKey.subarray(1), message, signature), 'a short public key')
    t.notOk(verify(publicKey, message, new Uint8Array(signature.length).fill(0xff)), 'a signature of all ones')
  })
}
