// The new primitives refuse malformed arguments with CryptoInputError before any key material is
// used, on both engines alike, and on the post-quantum implementation.
import t from 'tap'
import {
  CryptoInputError,
  nativeEngine,
  nobleEngine,
  postQuantum as pq,
  type CryptoEngine,
} from '../hal/crypto/index.js'

const zeros = (n: number) => new Uint8Array(n)
const filled = (n: number, value = 1) => new Uint8Array(n).fill(value)
const random = (n: number) => filled(n, 9)
const P256_ORDER = Buffer.from('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551', 'hex')
const message = new TextEncoder().encode('hemd')

/** Each case: a call that must throw CryptoInputError, named for the argument at fault. */
function refusals(e: CryptoEngine): [string, () => unknown][] {
  return [
    ['publicKey: unknown curve', () => e.publicKey('P-256' as never, filled(32))],
    ['publicKey: scalar of the wrong length', () => e.publicKey('SECP256R1', filled(31))],
    ['publicKey: scalar 0', () => e.publicKey('SECP256R1', zeros(32))],
    ['publicKey: scalar n', () => e.publicKey('SECP256R1', Uint8Array.from(P256_ORDER))],
    ['publicKey: X448 scalar of 32 bytes', () => e.publicKey('CURVE448', filled(32))],
    ['ecdsaSign: an X25519 key', () => e.ecdsaSign('CURVE25519' as never, filled(32), 'SHA2-256', message)],
    ['ecdsaSign: a SHA-3 digest', () => e.ecdsaSign('SECP256R1', filled(32), 'SHA3-256' as never, message)],
    ['ecdsaSign: key of the wrong length', () => e.ecdsaSign('SECP384R1', filled(32), 'SHA2-256', message)],
    ['ecdsaSign: message not bytes', () => e.ecdsaSign('SECP256R1', filled(32), 'SHA2-256', 'hemd' as never)],
    [
      'ecdsaVerify: signature not bytes',
      () => e.ecdsaVerify('SECP256R1', filled(33, 2), 'SHA2-256', message, [] as never),
    ],
    ['eddsaPublicKey: unknown curve', () => e.eddsaPublicKey('CURVE25519' as never, filled(32))],
    ['eddsaPublicKey: Ed448 seed of 56 bytes', () => e.eddsaPublicKey('ED448', filled(56))],
    ['eddsaSign: unknown algorithm', () => e.eddsaSign('Ed25519pure' as never, filled(32), message, zeros(0))],
    ['eddsaSign: context of 256 bytes', () => e.eddsaSign('Ed448', filled(57), message, zeros(256))],
    ['eddsaSign: Ed25519ctx with an empty context', () => e.eddsaSign('Ed25519ctx', filled(32), message, zeros(0))],
    ['eddsaSign: Ed25519 seed for Ed448ph', () => e.eddsaSign('Ed448ph', filled(32), message, zeros(0))],
    ['eddsaSign: context not bytes', () => e.eddsaSign('Ed25519ph', filled(32), message, undefined as never)],
    [
      'eddsaVerify: Ed25519ctx with an empty context',
      () => e.eddsaVerify('Ed25519ctx', filled(32), message, filled(64), zeros(0)),
    ],
    ['eddsaVerify: context of 256 bytes', () => e.eddsaVerify('Ed448ph', filled(57), message, filled(114), zeros(256))],
    ['digest: unknown digest', () => e.digest('SHA-256' as never, message)],
    ['digest: data not bytes', () => e.digest('SHA2-256', 'hemd' as never)],
    ['hmac: unknown digest', () => e.hmac('SHAKE256' as never, filled(32), message)],
    ['hmac: key not bytes', () => e.hmac('SHA3-256', null as never, message)],
    ['aesKeyWrap: KEK of 15 bytes', () => e.aesKeyWrap(filled(15), filled(16))],
    ['aesKeyWrap: 8 bytes of key data (RFC 5649, not 3394)', () => e.aesKeyWrap(filled(16), filled(8))],
    ['aesKeyWrap: 20 bytes of key data', () => e.aesKeyWrap(filled(16), filled(20))],
    ['aesKeyWrap: IV of 7 bytes', () => e.aesKeyWrap(filled(16), filled(16), filled(7))],
    ['aesKeyWrap: IV of 16 bytes', () => e.aesKeyWrap(filled(16), filled(16), filled(16))],
    ['aesKeyUnwrap: 16 bytes wrapped', () => e.aesKeyUnwrap(filled(16), filled(16))],
    ['aesKeyUnwrap: 28 bytes wrapped', () => e.aesKeyUnwrap(filled(32), filled(28))],
  ]
}

for (const engine of [nativeEngine, nobleEngine]) {
  t.test(`${engine.name}: malformed arguments are CryptoInputErrors`, async (t) => {
    for (const [name, call] of refusals(engine)) t.throws(call, CryptoInputError, name)
  })
}

t.test('a malformed key or signature is false, not an error, on every verify (types.ts)', async (t) => {
  const dsa = pq.mlDsaKeyPair('MLDSA44', filled(32))
  for (const e of [nativeEngine, nobleEngine]) {
    const cases: [string, () => boolean][] = [
      [
        'ecdsaVerify: public key of the wrong length',
        () => e.ecdsaVerify('SECP256R1', filled(32), 'SHA2-256', message, filled(70)),
      ],
      [
        'ecdsaVerify: hybrid SEC1 form',
        () => e.ecdsaVerify('SECP256R1', Uint8Array.of(6, ...filled(64)), 'SHA2-256', message, filled(70)),
      ],
      ['ecdsaVerify: an empty public key', () => e.ecdsaVerify('SECP384R1', zeros(0), 'SHA2-384', message, filled(70))],
      [
        'eddsaVerify: public key of the wrong length',
        () => e.eddsaVerify('Ed25519', filled(31), message, filled(64), zeros(0)),
      ],
      [
        'eddsaVerify: an Ed25519 key for Ed448',
        () => e.eddsaVerify('Ed448', filled(32), message, filled(114), zeros(0)),
      ],
      [
        'eddsaVerify: signature of the wrong length',
        () => e.eddsaVerify('Ed25519', filled(32), message, filled(63), zeros(0)),
      ],
    ]
    for (const [name, call] of cases) t.equal(call(), false, `${e.name}: ${name}`)
  }
  t.equal(
    pq.mlDsaVerify('MLDSA44', dsa.publicKey.subarray(1), message, filled(2420), zeros(0)),
    false,
    'mlDsaVerify: short key',
  )
})

t.test('the messages name the argument and never echo key bytes', async (t) => {
  const secret = filled(32, 0xab)
  for (const engine of [nativeEngine, nobleEngine]) {
    try {
      engine.eddsaSign('Ed448', secret, message, zeros(0))
      t.fail('an Ed25519 seed for Ed448 is refused')
    } catch (err) {
      t.match((err as Error).message, /EdDSA seed must be 57 bytes, got 32/)
      t.notMatch((err as Error).message, /ab/i)
    }
  }
})

t.test('post-quantum: malformed arguments are CryptoInputErrors', async (t) => {
  const kem = pq.mlKemKeyPair('MLKEM512', filled(64))
  const dsa = pq.mlDsaKeyPair('MLDSA44', filled(32))
  const cases: [string, () => unknown][] = [
    ['mlKemKeyPair: unknown variant', () => pq.mlKemKeyPair('MLKEM384' as never, filled(64))],
    ['mlKemKeyPair: seed of 32 bytes', () => pq.mlKemKeyPair('MLKEM768', filled(32))],
    ['mlKemEncapsulate: a 768 key for 512', () => pq.mlKemEncapsulate('MLKEM512', filled(1184), random)],
    [
      'mlKemEncapsulate: key failing the modulus check',
      () => pq.mlKemEncapsulate('MLKEM512', filled(800, 0xff), random),
    ],
    ['mlKemEncapsulate: random not a function', () => pq.mlKemEncapsulate('MLKEM512', kem.publicKey, null as never)],
    ['mlKemEncapsulate: random of 31 bytes', () => pq.mlKemEncapsulate('MLKEM512', kem.publicKey, () => filled(31))],
    [
      'mlKemDecapsulate: ciphertext of the wrong length',
      () => pq.mlKemDecapsulate('MLKEM512', kem.secretKey, filled(767)),
    ],
    [
      'mlKemDecapsulate: secret key of the wrong length',
      () => pq.mlKemDecapsulate('MLKEM512', filled(1631), filled(768)),
    ],
    [
      'mlKemDecapsulate: secret key failing the hash check',
      () => pq.mlKemDecapsulate('MLKEM512', filled(1632), filled(768)),
    ],
    ['mlDsaKeyPair: unknown variant', () => pq.mlDsaKeyPair('MLDSA55' as never, filled(32))],
    ['mlDsaKeyPair: seed of 64 bytes', () => pq.mlDsaKeyPair('MLDSA44', filled(64))],
    [
      'mlDsaSign: secret key of the wrong length',
      () => pq.mlDsaSign('MLDSA65', dsa.secretKey, message, zeros(0), random),
    ],
    [
      'mlDsaSign: secret key out of range',
      () => pq.mlDsaSign('MLDSA44', filled(2560, 0xff), message, zeros(0), random),
    ],
    ['mlDsaSign: context of 256 bytes', () => pq.mlDsaSign('MLDSA44', dsa.secretKey, message, zeros(256), random)],
    ['mlDsaSign: message not bytes', () => pq.mlDsaSign('MLDSA44', dsa.secretKey, 'hemd' as never, zeros(0), random)],
    [
      'mlDsaVerify: context of 256 bytes',
      () => pq.mlDsaVerify('MLDSA44', dsa.publicKey, message, filled(2420), zeros(256)),
    ],
  ]
  for (const [name, call] of cases) t.throws(call, CryptoInputError, name)
})
