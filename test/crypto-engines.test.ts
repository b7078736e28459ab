// Each engine on its own: the boundary checks, the named errors and the output shapes.
// Both engines must behave identically, so every test runs on both.
import { p256, p384, p521 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import t, { type Test } from 'tap'
import { CURVES, ECDH_CURVES } from '../hal/crypto/curves.js'
import {
  AuthenticationError,
  CipherError,
  CryptoInputError,
  nativeEngine,
  nobleEngine,
  type CryptoEngine,
  type Curve,
} from '../hal/crypto/index.js'
import { SMALL_ORDER } from './helpers/small-order-points.js'

const ENGINES = [nativeEngine, nobleEngine]
const SEC_CURVES = { SECP256R1: p256, SECP384R1: p384, SECP521R1: p521, SECP256K1: secp256k1 }
const ALL_CURVES = ECDH_CURVES

type SecCurve = keyof typeof SEC_CURVES
const SEC_CURVE_NAMES = Object.keys(SEC_CURVES) as SecCurve[]

const bytes = (length: number, fill = 0xa5) => new Uint8Array(length).fill(fill)

/** Size and order of a SEC curve, with a scalar encoder. */
function sec(curve: SecCurve) {
  const info = CURVES[curve]
  if (info.kind !== 'weierstrass') throw new Error(`${curve} is a SEC curve`)
  const scalar = (n: bigint) => Buffer.from(n.toString(16).padStart(info.size * 2, '0'), 'hex')
  return { ...info, scalar }
}
const hex = (data: Uint8Array) => Buffer.from(data).toString('hex')
const KEY = bytes(32)
const IV = bytes(16, 0x3c)

/** Runs `body` as a subtest once per engine. */
function forEachEngine(name: string, body: (t: Test, engine: CryptoEngine) => void) {
  for (const engine of ENGINES) t.test(`${engine.name}: ${name}`, async (t) => body(t, engine))
}

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n
  for (base %= modulus; exponent > 0n; exponent >>= 1n, base = (base * base) % modulus) {
    if (exponent & 1n) result = (result * base) % modulus
  }
  return result
}

/** The first x with no point on the curve (x³ + ax + b a non-residue), as compressed SEC1. */
function compressedOffCurve(curve: SecCurve): Uint8Array {
  const { p, a, b } = SEC_CURVES[curve].Point.CURVE()
  const size = CURVES[curve].size
  for (let x = 1n; ; x++) {
    const rhs = (((x * x * x + a * x + b) % p) + p) % p
    if (modPow(rhs, (p - 1n) / 2n, p) === p - 1n) {
      return Buffer.from('02' + x.toString(16).padStart(size * 2, '0'), 'hex')
    }
  }
}

forEachEngine('AES keys must be 16, 24 or 32 bytes and never appear in messages', (t, engine) => {
  for (const length of [0, 1, 15, 17, 20, 31, 33, 64]) {
    const key = bytes(length)
    const calls = [
      () => engine.aesEcbEncrypt(key, bytes(16)),
      () => engine.aesEcbDecrypt(key, bytes(16)),
      () => engine.aesCbcEncrypt(key, IV, bytes(5)),
      () => engine.aesCbcDecrypt(key, IV, bytes(16)),
      () => engine.aesGcmEncrypt(key, IV, bytes(5)),
      () => engine.aesGcmDecrypt(key, IV, bytes(5), bytes(16)),
    ]
    for (const call of calls) {
      t.throws(call, { name: 'CryptoInputError', message: `AES key must be 16, 24 or 32 bytes, got ${length}` })
    }
  }
  for (const length of [16, 24, 32]) t.equal(engine.aesEcbEncrypt(bytes(length), bytes(16)).length, 16)
})

forEachEngine('error messages never carry key material', (t, engine) => {
  const secret = Uint8Array.from({ length: 66 }, (_, i) => 0x80 + i)
  const p521 = sec('SECP521R1')
  const p521Order = p521.scalar(p521.order)
  const sealed = engine.aesGcmEncrypt(secret.subarray(0, 32), IV, bytes(8))
  const failures = [
    () => engine.aesEcbEncrypt(secret.subarray(0, 17), bytes(16)),
    () => engine.aesGcmDecrypt(secret.subarray(0, 32), IV, sealed.ciphertext, bytes(16)),
    () => engine.aesCbcDecrypt(secret.subarray(0, 32), IV, bytes(16)),
    () => engine.ecdh(secret as unknown as Curve, secret, secret),
    () => engine.ecdh('SECP521R1', p521Order, secret),
    () => engine.ecdh('CURVE25519', secret.subarray(0, 32), new Uint8Array(32)),
    () => engine.generateKeyPair('SECP256R1', () => new Uint8Array(32).fill(0xff)),
  ]
  for (const fail of failures) {
    const error = t.throws(fail) as Error
    for (const encoding of ['hex', 'base64', 'base64url'] as const) {
      for (const key of [secret.subarray(0, 16), p521Order.subarray(0, 16)]) {
        const leaked = error.message.includes(Buffer.from(key).toString(encoding).slice(0, 12))
        t.notOk(leaked, `${error.name}: ${error.message}`)
      }
    }
    t.notMatch(error.message, /\d+,\d+,\d+/, 'no byte lists either')
  }
})

forEachEngine('every argument must be a Uint8Array', (t, engine) => {
  const notBytes: unknown[] = [undefined, null, 'a5a5', [1, 2], new Uint16Array(8), new ArrayBuffer(16), {}]
  for (const value of notBytes) {
    const v = value as Uint8Array
    const calls = [
      () => engine.aesEcbEncrypt(v, bytes(16)),
      () => engine.aesEcbEncrypt(KEY, v),
      () => engine.aesCbcEncrypt(KEY, v, bytes(1)),
      () => engine.aesCbcEncrypt(KEY, IV, v),
      () => engine.aesGcmEncrypt(KEY, IV, v),
      () => engine.aesGcmDecrypt(KEY, IV, v, bytes(16)),
      () => engine.aesGcmDecrypt(KEY, IV, bytes(1), v),
      () => engine.ecdh('CURVE25519', v, bytes(32)),
      () => engine.ecdh('CURVE25519', bytes(32), v),
      () => engine.hkdfSha256(v, undefined, bytes(1), 32),
      () => engine.hkdfSha256(bytes(1), undefined, v, 32),
    ]
    for (const call of calls) t.throws(call, CryptoInputError)
    if (value !== undefined) {
      t.throws(() => engine.aesGcmEncrypt(KEY, IV, bytes(1), v), CryptoInputError, 'aad')
      t.throws(() => engine.hkdfSha256(bytes(1), v, bytes(1), 32), CryptoInputError, 'salt')
    }
  }
  t.ok(engine.aesEcbEncrypt(Buffer.alloc(16), Buffer.alloc(16)), 'a Buffer is a Uint8Array')
})

forEachEngine('outputs are plain Uint8Arrays, never Buffers or views on shared memory', (t, engine) => {
  const sealed = engine.aesGcmEncrypt(KEY, IV, bytes(20))
  const outputs = [
    engine.aesEcbEncrypt(KEY, bytes(32)),
    engine.aesCbcEncrypt(KEY, IV, bytes(20)),
    sealed.ciphertext,
    sealed.tag,
    engine.aesGcmDecrypt(KEY, IV, sealed.ciphertext, sealed.tag),
    engine.hkdfSha256(bytes(8), undefined, bytes(0), 42),
    engine.ecdh('CURVE25519', bytes(32, 1), engine.generateKeyPair('CURVE25519', () => bytes(32, 2)).publicKey),
  ]
  for (const output of outputs) {
    t.equal(Object.getPrototypeOf(output), Uint8Array.prototype)
    t.equal(output.byteLength, output.buffer.byteLength, 'owns its buffer')
  }
})

forEachEngine('ECB takes whole blocks only and adds no padding', (t, engine) => {
  for (const length of [1, 15, 17, 31]) {
    const error = t.throws(() => engine.aesEcbEncrypt(KEY, bytes(length)))
    t.ok(error instanceof RangeError, 'a CryptoInputError is a RangeError')
    t.throws(() => engine.aesEcbDecrypt(KEY, bytes(length)), {
      name: 'CryptoInputError',
      message: `data must be a multiple of 16 bytes, got ${length}`,
    })
  }
  t.same(engine.aesEcbEncrypt(KEY, new Uint8Array(0)), new Uint8Array(0))
  t.equal(engine.aesEcbEncrypt(KEY, bytes(48)).length, 48)
  t.same(engine.aesEcbDecrypt(KEY, engine.aesEcbEncrypt(KEY, bytes(48, 7))), bytes(48, 7))
})

forEachEngine('CBC: a 16-byte IV, PKCS#7 padding, whole non-empty ciphertext', (t, engine) => {
  for (const length of [0, 8, 12, 15, 17, 32]) {
    t.throws(() => engine.aesCbcEncrypt(KEY, bytes(length), bytes(1)), {
      message: `IV must be 16 bytes, got ${length}`,
    })
  }
  for (const length of [0, 1, 15, 17]) {
    t.throws(() => engine.aesCbcDecrypt(KEY, IV, bytes(length)), {
      name: 'CryptoInputError',
      message: `ciphertext must be a non-zero multiple of 16 bytes, got ${length}`,
    })
  }
  for (const [length, padded] of [
    [0, 16],
    [1, 16],
    [15, 16],
    [16, 32],
    [17, 32],
  ] as const) {
    const ciphertext = engine.aesCbcEncrypt(KEY, IV, bytes(length, 9))
    t.equal(ciphertext.length, padded, `${length} bytes pad to ${padded}`)
    t.same(engine.aesCbcDecrypt(KEY, IV, ciphertext), bytes(length, 9))
  }
})

forEachEngine('CBC: invalid padding is a CipherError, valid padding of any length is removed', (t, engine) => {
  // A one-block ciphertext whose CBC decryption is exactly `block`: D(E(x)) xor (x xor block).
  const decryptTo = (block: Uint8Array) => {
    const x = bytes(16, 0x42)
    const iv = x.map((byte, i) => byte ^ block[i]!)
    return engine.aesCbcDecrypt(KEY, iv, engine.aesEcbEncrypt(KEY, x))
  }
  const block = (tail: number[]) => Uint8Array.from([...bytes(16 - tail.length, 0xee), ...tail])
  for (const tail of [[0x00], [0x11], [0xff], [0x01, 0x02], [0x03, 0x03], [0x05, 0x10, 0x10, 0x10]]) {
    t.throws(() => decryptTo(block(tail)), CipherError, `tail ${hex(Uint8Array.from(tail))}`)
  }
  const error = t.throws(() => decryptTo(block([0x00])), { name: 'CipherError' })
  t.notMatch(String((error as Error).message), hex(KEY))
  t.same(decryptTo(block([0x01])), bytes(15, 0xee))
  t.same(decryptTo(block([0x03, 0x03, 0x03])), bytes(13, 0xee))
  t.same(decryptTo(bytes(16, 0x10)), new Uint8Array(0))
})

forEachEngine('GCM: nonce 12 to 64 bytes, 16-byte tag, empty aad same as none', (t, engine) => {
  for (const length of [0, 1, 8, 11, 65, 128]) {
    t.throws(() => engine.aesGcmEncrypt(KEY, bytes(length), bytes(1)), {
      name: 'CryptoInputError',
      message: `GCM nonce must be 12 to 64 bytes, got ${length}`,
    })
  }
  for (const length of [12, 16, 60, 64]) {
    const { ciphertext, tag } = engine.aesGcmEncrypt(KEY, bytes(length), bytes(3))
    t.same(engine.aesGcmDecrypt(KEY, bytes(length), ciphertext, tag), bytes(3))
  }
  const { ciphertext, tag } = engine.aesGcmEncrypt(KEY, IV, bytes(0))
  t.same(ciphertext, new Uint8Array(0))
  t.equal(tag.length, 16)
  for (const length of [0, 4, 12, 15, 17, 32]) {
    t.throws(() => engine.aesGcmDecrypt(KEY, IV, ciphertext, bytes(length)), {
      message: `GCM tag must be 16 bytes, got ${length}`,
    })
  }
  t.same(engine.aesGcmEncrypt(KEY, IV, bytes(7), new Uint8Array(0)), engine.aesGcmEncrypt(KEY, IV, bytes(7)))
})

forEachEngine('GCM: any change to ciphertext, tag, aad, nonce or key is an AuthenticationError', (t, engine) => {
  const aad = bytes(32, 0x61)
  const plaintext = bytes(40, 0x70)
  const { ciphertext, tag } = engine.aesGcmEncrypt(KEY, IV, plaintext, aad)
  const flip = (data: Uint8Array, at: number) => data.map((byte, i) => (i === at ? byte ^ 0x80 : byte))
  const open = (c = ciphertext, g = tag, a = aad, n = IV, k = KEY) => engine.aesGcmDecrypt(k, n, c, g, a)
  t.same(open(), plaintext)
  const forgeries: [string, () => unknown][] = [
    ['ciphertext first byte', () => open(flip(ciphertext, 0))],
    ['ciphertext last byte', () => open(flip(ciphertext, 39))],
    ['ciphertext truncated', () => open(ciphertext.subarray(0, 39))],
    ['tag first byte', () => open(ciphertext, flip(tag, 0))],
    ['tag last byte', () => open(ciphertext, flip(tag, 15))],
    ['aad changed', () => open(ciphertext, tag, flip(aad, 5))],
    ['aad missing', () => engine.aesGcmDecrypt(KEY, IV, ciphertext, tag)],
    ['nonce changed', () => open(ciphertext, tag, aad, flip(IV, 3))],
    ['key changed', () => open(ciphertext, tag, aad, IV, flip(KEY, 31))],
  ]
  for (const [what, forge] of forgeries) {
    t.throws(forge, { name: 'AuthenticationError', message: 'GCM authentication failed' }, what)
    t.throws(forge, AuthenticationError, what)
  }
})

forEachEngine('ECDH: known curves, private keys of the right size and range', (t, engine) => {
  for (const curve of ['ED25519', 'secp256r1', 'P-256', '', 'toString', undefined]) {
    t.throws(() => engine.ecdh(curve as Curve, bytes(32), bytes(32)), {
      name: 'CryptoInputError',
      message: /^unknown curve/,
    })
    t.throws(() => engine.generateKeyPair(curve as Curve, () => bytes(32)), CryptoInputError)
  }
  for (const curve of ALL_CURVES) {
    const { size } = CURVES[curve]
    const peer = engine.generateKeyPair(curve, () => bytes(size, 1)).publicKey
    for (const length of [0, size - 1, size + 1]) {
      t.throws(() => engine.ecdh(curve, bytes(length, 1), peer), {
        message: `private key must be ${size} bytes, got ${length}`,
      })
    }
  }
  for (const curve of SEC_CURVE_NAMES) {
    const { size, order, scalar } = sec(curve)
    const peer = engine.generateKeyPair(curve, () => bytes(size, 1)).publicKey
    for (const bad of [0n, order, order + 1n]) {
      t.throws(() => engine.ecdh(curve, scalar(bad), peer), {
        name: 'CryptoInputError',
        message: 'private key is not a scalar in [1, n-1]',
      })
    }
    t.equal(engine.ecdh(curve, scalar(order - 1n), peer).length, size, 'n-1 is a valid scalar')
    t.equal(engine.ecdh(curve, scalar(1n), peer).length, size, '1 is a valid scalar')
  }
})

forEachEngine('ECDH: malformed and invalid SEC1 points are CryptoInputErrors', (t, engine) => {
  for (const curve of SEC_CURVE_NAMES) {
    const { size } = CURVES[curve]
    const own = engine.generateKeyPair(curve, () => bytes(size, 1)).privateKey
    const generated = engine.generateKeyPair(curve, () => bytes(size, 2)).publicKey
    const uncompressed = SEC_CURVES[curve].Point.fromBytes(generated).toBytes(false)
    const malformed = [
      new Uint8Array(0),
      Uint8Array.of(0x00),
      Uint8Array.of(0x04, ...uncompressed.subarray(1, 1 + size)),
      Uint8Array.of(0x05, ...uncompressed.subarray(1, 1 + size)),
      Uint8Array.of(0x06, ...uncompressed.subarray(1)),
      Uint8Array.of(0x07, ...uncompressed.subarray(1)),
      Uint8Array.of(0x02, ...uncompressed.subarray(1)),
      uncompressed.subarray(0, -1),
      Uint8Array.of(...uncompressed, 0),
    ]
    for (const peer of malformed) {
      const wanted = { name: 'CryptoInputError', message: /^public key must be SEC1/ }
      t.throws(() => engine.ecdh(curve, own, peer), wanted, `${curve} ${peer.length} bytes`)
    }
    const xTooLarge = Uint8Array.of(0x02, ...bytes(size, 0xff))
    xTooLarge[1] = xTooLarge[1]! & sec(curve).topByteMask
    const offCurve = [
      uncompressed.map((byte, i) => (i === uncompressed.length - 1 ? byte ^ 1 : byte)),
      Uint8Array.of(0x04, ...bytes(2 * size, 0)),
      compressedOffCurve(curve),
      xTooLarge,
    ]
    for (const peer of offCurve) {
      const wanted = { name: 'CryptoInputError', message: `peer public key is not a point on ${curve}` }
      t.throws(() => engine.ecdh(curve, own, peer), wanted, `${curve} off curve`)
    }
  }
})

forEachEngine('ECDH: X25519/X448 keys have fixed sizes; small-order peers are refused', (t, engine) => {
  for (const curve of ['CURVE25519', 'CURVE448'] as const) {
    const { size } = CURVES[curve]
    for (const length of [0, size - 1, size + 1, 2 * size + 1]) {
      t.throws(() => engine.ecdh(curve, bytes(size), bytes(length)), {
        message: `public key must be ${size} bytes, got ${length}`,
      })
    }
    for (const [what, peer] of SMALL_ORDER[curve]) {
      t.throws(
        () => engine.ecdh(curve, bytes(size), peer),
        {
          name: 'CryptoInputError',
          message: `peer public key is a small-order ${curve} point`,
        },
        `${curve} ${what}`,
      )
    }
  }
})

forEachEngine('generateKeyPair: raw or compressed public keys, scalars redrawn until in range', (t, engine) => {
  // P-521 scalars have 521 bits: the top 7 bits of the first byte are masked off.
  const masked = (curve: Curve, key: Uint8Array) =>
    curve === 'SECP521R1' ? Uint8Array.of(key[0]! & 0x01, ...key.subarray(1)) : key
  for (const curve of ALL_CURVES) {
    const info = CURVES[curve]
    const { privateKey, publicKey } = engine.generateKeyPair(curve, () => bytes(info.size, 0x11))
    t.same(privateKey, masked(curve, bytes(info.size, 0x11)), `${curve} private key is the random bytes`)
    if (info.kind === 'montgomery') t.equal(publicKey.length, info.size)
    else {
      t.equal(publicKey.length, 1 + info.size)
      t.ok(publicKey[0] === 2 || publicKey[0] === 3, `${curve} public key is compressed`)
    }
  }
  for (const curve of SEC_CURVE_NAMES) {
    const { size, order, scalar } = sec(curve)
    const draws = [new Uint8Array(size), scalar(order), bytes(size, 0xff), bytes(size, 0x07)]
    let drawn = 0
    const { privateKey } = engine.generateKeyPair(curve, () => draws[drawn++]!)
    t.equal(drawn, 4, `${curve} redraws 0, n and 0xff..`)
    t.same(privateKey, masked(curve, bytes(size, 0x07)))
  }
  const one = Uint8Array.of(0x80, ...new Uint8Array(64), 0x01)
  const masksHighBits = engine.generateKeyPair('SECP521R1', () => one).privateKey
  t.same(masksHighBits, Uint8Array.of(...new Uint8Array(65), 0x01), 'P-521 masks, not rejects, the high bits')
  t.throws(() => engine.generateKeyPair('SECP256R1', () => new Uint8Array(32)), {
    name: 'CryptoInputError',
    message: 'random source gave no valid scalar in 64 draws',
  })
  t.throws(() => engine.generateKeyPair('CURVE25519', () => bytes(31)), {
    message: 'random source must return 32 bytes',
  })
  t.throws(() => engine.generateKeyPair('CURVE25519', undefined as never), { message: 'random must be a function' })
  const random = bytes(32, 0x21)
  const { privateKey } = engine.generateKeyPair('CURVE25519', () => random)
  random.fill(0)
  t.same(privateKey, bytes(32, 0x21), 'the private key is a copy of what the source returned')
})

forEachEngine('HKDF: length 1 to 8160, info up to 1024 bytes, absent salt is 32 zero bytes', (t, engine) => {
  for (const length of [0, -1, 8161, 1.5, NaN, '32']) {
    t.throws(() => engine.hkdfSha256(bytes(8), undefined, bytes(0), length as number), {
      name: 'CryptoInputError',
      message: 'HKDF length must be an integer from 1 to 8160',
    })
  }
  t.equal(engine.hkdfSha256(bytes(8), undefined, bytes(0), 8160).length, 8160)
  t.equal(engine.hkdfSha256(bytes(8), undefined, bytes(0), 1).length, 1)
  t.throws(() => engine.hkdfSha256(bytes(8), undefined, bytes(1025), 32), {
    message: 'HKDF info must be at most 1024 bytes, got 1025',
  })
  t.equal(engine.hkdfSha256(bytes(8), undefined, bytes(1024), 32).length, 32)
  const noSalt = engine.hkdfSha256(bytes(8), undefined, bytes(3), 32)
  t.same(engine.hkdfSha256(bytes(8), new Uint8Array(32), bytes(3), 32), noSalt)
  t.same(engine.hkdfSha256(bytes(8), new Uint8Array(0), bytes(3), 32), noSalt)
  t.equal(engine.hkdfSha256(new Uint8Array(0), undefined, bytes(0), 32).length, 32, 'empty ikm is allowed')
})

t.test('the curve table agrees with noble on every SEC order', async (t) => {
  for (const curve of SEC_CURVE_NAMES) {
    const noble = SEC_CURVES[curve]
    t.equal(sec(curve).order, noble.Point.CURVE().n, curve)
    t.equal(sec(curve).size, noble.lengths.secretKey, `${curve} size`)
  }
})
