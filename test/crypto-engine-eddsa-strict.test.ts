// One EdDSA rule for both engines and every variant: signatures a lax verifier (ZIP-215, cofactored,
// small-order keys allowed) accepts, built on keys or R values with a small-order component,
// non-canonical encodings or s ≥ L, are false on native and noble alike; eddsaPublicKeyValid, the
// key store's check at import, refuses the same keys.
import { createHash } from 'node:crypto'
import { ed25519, ed25519ctx, ed25519ph } from '@noble/curves/ed25519.js'
import { ed448, ed448ph } from '@noble/curves/ed448.js'
import t from 'tap'
import { eddsaPublicKeyValid, nativeEngine, nobleEngine, type EdAlgorithm, type EdCurve } from '../hal/crypto/index.js'
import { hex } from './helpers/engine-properties.js'

type Point = InstanceType<typeof ed25519.Point>
const POINT = { ED25519: ed25519.Point, ED448: ed448.Point as unknown as typeof ed25519.Point }
const LAX = { Ed25519: ed25519, Ed25519ctx: ed25519ctx, Ed25519ph: ed25519ph, Ed448: ed448, Ed448ph: ed448ph }
const message = new TextEncoder().encode('hemd strict EdDSA')

const curveOf = (algorithm: EdAlgorithm): EdCurve => (algorithm.startsWith('Ed448') ? 'ED448' : 'ED25519')
const le = (value: bigint, size: number) =>
  Uint8Array.from({ length: size }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn))
const fromLe = (data: Uint8Array) => data.reduceRight((value, byte) => (value << 8n) | BigInt(byte), 0n)

/** RFC 8032's k = H(dom ‖ R ‖ A ‖ PH(M)) mod L, written out here rather than taken from either engine. */
function challenge(algorithm: EdAlgorithm, r: Uint8Array, a: Uint8Array, context: Uint8Array): bigint {
  const prehashed = algorithm.endsWith('ph')
  const ed448 = curveOf(algorithm) === 'ED448'
  const m = !prehashed
    ? message
    : ed448
      ? createHash('shake256', { outputLength: 64 }).update(message).digest()
      : createHash('sha512').update(message).digest()
  const flag = Uint8Array.of(prehashed ? 1 : 0, context.length)
  const dom = ed448
    ? Buffer.concat([Buffer.from('SigEd448'), flag, context])
    : algorithm === 'Ed25519'
      ? Buffer.alloc(0)
      : Buffer.concat([Buffer.from('SigEd25519 no Ed25519 collisions'), flag, context])
  const hash = ed448 ? createHash('shake256', { outputLength: 114 }) : createHash('sha512')
  return fromLe(hash.update(dom).update(r).update(a).update(m).digest()) % POINT[curveOf(algorithm)].Fn.ORDER
}

/** A signature (R, s) with s = r + k·a: the equation holds up to whatever torsion `a` or R carry. */
function forge(algorithm: EdAlgorithm, context: Uint8Array, key: { a: bigint; A: Uint8Array }, R: Point, r: bigint) {
  const Point = POINT[curveOf(algorithm)]
  const rBytes = R.toBytes()
  const s = Point.Fn.create(r + challenge(algorithm, rBytes, key.A, context) * key.a)
  return Uint8Array.of(...rBytes, ...le(s, rBytes.length))
}

/** The torsion points: the identity, order 2, and the largest order (8 on edwards25519, 4 on edwards448). */
function torsion(curve: EdCurve) {
  const Point = POINT[curve]
  const p = Point.Fp.ORDER
  const largest =
    curve === 'ED25519'
      ? Point.fromBytes(Buffer.from('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', 'hex'))
      : Point.fromAffine({ x: 1n, y: 0n })
  return { identity: Point.ZERO, order2: Point.fromAffine({ x: 0n, y: p - 1n }), largest }
}

const CASES: [EdAlgorithm, Uint8Array][] = [
  ['Ed25519', new Uint8Array(0)],
  ['Ed25519ctx', Uint8Array.of(1, 2)],
  ['Ed25519ph', new Uint8Array(0)],
  ['Ed448', new Uint8Array(0)],
  ['Ed448', Uint8Array.of(1, 2)],
  ['Ed448ph', Uint8Array.of(3)],
]

/** The vectors of one variant, each with whether the lax verifier is expected to take it. */
function vectors(algorithm: EdAlgorithm, context: Uint8Array) {
  const curve = curveOf(algorithm)
  const Point = POINT[curve]
  const size = Point.Fp.BYTES
  const { identity, order2, largest } = torsion(curve)
  const a = 0x1234567890abcdefn
  const prime = { a, A: Point.BASE.multiply(a).toBytes() }
  const r = 0xfedcba987654321n
  const R = Point.BASE.multiply(r)
  // With R the identity and s = 0 the equation is [k]A = 0: a small-order A passes it for some
  // messages (the identity for every one), a cofactored verifier for every message.
  const zeroSignature = (A: Uint8Array) => Uint8Array.of(...identity.toBytes(), ...new Uint8Array(size))
  const small = (T: Point) => ({ publicKey: T.toBytes(), signature: zeroSignature(T.toBytes()) })
  const mixedKey = { a, A: Point.BASE.multiply(a).add(largest).toBytes() }
  const valid = forge(algorithm, context, prime, R, r)
  const sPlusL = le(fromLe(valid.subarray(size)) + Point.Fn.ORDER, size)
  // The identity with its x sign bit set: x = 0, so RFC 8032 §5.1.3 refuses it.
  const signedIdentity = identity.toBytes()
  signedIdentity[size - 1] = signedIdentity[size - 1]! | 0x80
  // y = p + 1 encodes the identity too, with y out of range (fits in the bits only on edwards25519).
  const overflowY = curve === 'ED25519' ? le(Point.Fp.ORDER + 1n, size) : undefined
  const nonCanonicalR = (() => {
    const rBytes = signedIdentity
    const s = Point.Fn.create(challenge(algorithm, rBytes, prime.A, context) * a)
    return Uint8Array.of(...rBytes, ...le(s, size))
  })()
  return {
    valid: { publicKey: prime.A, signature: valid, lax: true },
    list: [
      { name: 'the identity as key', ...small(identity), lax: true },
      { name: 'a key of order 2', ...small(order2), lax: true },
      { name: `a key of order ${curve === 'ED25519' ? 8 : 4}`, ...small(largest), lax: true },
      {
        name: 'a mixed-order key (prime-order point plus torsion)',
        publicKey: mixedKey.A,
        signature: forge(algorithm, context, mixedKey, R, r),
        lax: true,
      },
      {
        name: 'R off by a small-order point, key of prime order',
        publicKey: prime.A,
        signature: forge(algorithm, context, prime, R.add(largest), r),
        lax: true,
      },
      {
        name: 'a non-canonical key (x = 0, sign bit set)',
        publicKey: signedIdentity,
        signature: zeroSignature(signedIdentity),
        lax: true,
      },
      ...(overflowY
        ? [
            {
              name: 'a non-canonical key (y = p + 1)',
              publicKey: overflowY,
              signature: zeroSignature(overflowY),
              lax: true,
            },
          ]
        : []),
      { name: 'a non-canonical R (x = 0, sign bit set)', publicKey: prime.A, signature: nonCanonicalR, lax: true },
      {
        name: 's + L in place of s',
        publicKey: prime.A,
        signature: Uint8Array.of(...valid.subarray(0, size), ...sPlusL),
        lax: false,
      },
    ],
  }
}

function lax(algorithm: EdAlgorithm, publicKey: Uint8Array, signature: Uint8Array, context: Uint8Array) {
  const options = algorithm === 'Ed25519' ? { zip215: true } : { context, zip215: true }
  try {
    return LAX[algorithm].verify(signature, message, publicKey, options)
  } catch {
    return false
  }
}

for (const [algorithm, context] of CASES) {
  t.test(
    `${algorithm}, context of ${context.length} bytes: keys and R off the prime-order subgroup are false`,
    async (t) => {
      const { valid, list } = vectors(algorithm, context)
      for (const e of [nativeEngine, nobleEngine])
        t.ok(
          e.eddsaVerify(algorithm, valid.publicKey, message, valid.signature, context),
          `${e.name}: the honest signature`,
        )
      for (const v of list) {
        // The vector matters: a verifier without the rule takes it (s + L: its s − L form verifies).
        if (v.lax) t.ok(lax(algorithm, v.publicKey, v.signature, context), `${v.name}: a lax verifier accepts`)
        const answers = [nativeEngine, nobleEngine].map((e) =>
          e.eddsaVerify(algorithm, v.publicKey, message, v.signature, context),
        )
        t.same(answers, [false, false], `${v.name}: native and noble both false`)
      }
    },
  )
}

t.test('the identity key with R = identity, s = 0 is false for every message on both engines', async (t) => {
  const signature = Uint8Array.of(1, ...new Uint8Array(63))
  const key = Uint8Array.of(1, ...new Uint8Array(31))
  for (const text of ['', 'a', 'hemd', 'any message at all'])
    for (const e of [nativeEngine, nobleEngine])
      t.notOk(
        e.eddsaVerify('Ed25519', key, new TextEncoder().encode(text), signature, new Uint8Array(0)),
        `${e.name} "${text}"`,
      )
})

t.test('eddsaPublicKeyValid: prime-order keys only, canonical, the identity refused', async (t) => {
  for (const curve of ['ED25519', 'ED448'] as const) {
    const size = curve === 'ED25519' ? 32 : 57
    const genuine = nativeEngine.eddsaPublicKey(curve, new Uint8Array(size).fill(9))
    t.ok(eddsaPublicKeyValid(curve, genuine), `${curve}: a key derived from a seed`)
    t.ok(eddsaPublicKeyValid(curve, genuine), `${curve}: again (remembered)`)
    const algorithm = curve === 'ED25519' ? 'Ed25519' : 'Ed448'
    for (const v of vectors(algorithm, new Uint8Array(0)).list) {
      if (
        hex(v.publicKey) !== hex(genuine) &&
        !v.name.includes('prime order') &&
        !v.name.startsWith('s + L') &&
        !v.name.includes(' R ')
      )
        t.notOk(eddsaPublicKeyValid(curve, v.publicKey), `${curve}: ${v.name}`)
    }
    const notAPoint = new Uint8Array(size)
    notAPoint[0] = 2
    t.notOk(eddsaPublicKeyValid(curve, notAPoint), `${curve}: y = 2 is not a point`)
    t.notOk(eddsaPublicKeyValid(curve, genuine.subarray(1)), `${curve}: a short key`)
  }
  t.notOk(
    eddsaPublicKeyValid('ED448', nativeEngine.eddsaPublicKey('ED25519', new Uint8Array(32))),
    'an Ed25519 key for Ed448',
  )
})
