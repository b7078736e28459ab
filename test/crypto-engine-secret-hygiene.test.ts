// Secrets in the engines: private keys never land in Node's shared Buffer pool (which is never
// wiped and is handed out again), random bytes drawn for keys and nonces are wiped at the source,
// and the native engine imports a key once per key array.
import t from 'tap'
import { nativeEngine, postQuantum as pq, type RandomSource } from '../hal/crypto/index.js'
import { seededRandom } from './helpers/engine-properties.js'

const message = new TextEncoder().encode('hemd hygiene')

/** A view of `data`, so that searching for it copies nothing into the pool itself. */
const view = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.byteLength)

/** Whether `secret` is anywhere in the slab Node's small Buffers are cut from right now. */
function inPool(secret: Uint8Array): boolean {
  const slab = Buffer.allocUnsafe(1).buffer
  return Buffer.from(slab).indexOf(view(secret)) !== -1
}

t.test('private keys and seeds are not copied into the Buffer pool', async (t) => {
  const cases: [string, (key: Uint8Array) => unknown, number][] = [
    ['ecdsaSign P-256', (key) => nativeEngine.ecdsaSign('SECP256R1', key, 'SHA2-256', message), 32],
    ['publicKey P-384', (key) => nativeEngine.publicKey('SECP384R1', key), 48],
    ['eddsaSign Ed25519', (key) => nativeEngine.eddsaSign('Ed25519', key, message, new Uint8Array(0)), 32],
    ['eddsaPublicKey Ed448', (key) => nativeEngine.eddsaPublicKey('ED448', key), 57],
    ['ecdh X25519', (key) => nativeEngine.ecdh('CURVE25519', key, nativeEngine.publicKey('CURVE25519', key)), 32],
  ]
  for (const [at, [name, use, size]] of cases.entries()) {
    // Bytes of their own (0x51, 0x52, … then a counter), in range for every curve.
    const key = Uint8Array.from({ length: size }, (_, i) => (i === 0 ? 0x51 + at : i))
    use(key)
    t.notOk(inPool(key), name)
  }
})

t.test('random bytes are wiped where the source put them, rejected draws included', async (t) => {
  const handedOut: Uint8Array[] = []
  const keeping =
    (source: RandomSource): RandomSource =>
    (n) => {
      const bytes = source(n)
      handedOut.push(bytes)
      return bytes
    }
  // P-256: all ones is above n and is redrawn.
  let first = true
  const rejectFirst: RandomSource = (n) =>
    first ? ((first = false), new Uint8Array(n).fill(0xff)) : seededRandom(Uint8Array.of(1))(n)
  nativeEngine.generateKeyPair('SECP256R1', keeping(rejectFirst))
  nativeEngine.generateKeyPair('CURVE448', keeping(seededRandom(Uint8Array.of(2))))
  const kem = pq.mlKemKeyPair('MLKEM512', new Uint8Array(64).fill(3))
  pq.mlKemEncapsulate('MLKEM512', kem.publicKey, keeping(seededRandom(Uint8Array.of(4))))
  const dsa = pq.mlDsaKeyPair('MLDSA44', new Uint8Array(32).fill(5))
  pq.mlDsaSign('MLDSA44', dsa.secretKey, message, new Uint8Array(0), keeping(seededRandom(Uint8Array.of(6))))
  t.equal(handedOut.length, 5, 'two draws for P-256, one each for X448, ML-KEM m and ML-DSA rnd')
  t.same(
    handedOut.map((bytes) => bytes.every((byte) => byte === 0)),
    [true, true, true, true, true],
  )
})

t.test('the native engine imports a signing key once per key array', async (t) => {
  // Observable only through the caveat its comment states: bytes changed in place are not seen.
  const first = nativeEngine.generateKeyPair('SECP256R1', seededRandom(Uint8Array.of(7)))
  const second = nativeEngine.generateKeyPair('SECP256R1', seededRandom(Uint8Array.of(8)))
  const key = Uint8Array.from(first.privateKey)
  nativeEngine.ecdsaSign('SECP256R1', key, 'SHA2-256', message)
  key.set(second.privateKey)
  const signature = nativeEngine.ecdsaSign('SECP256R1', key, 'SHA2-256', message)
  t.ok(nativeEngine.ecdsaVerify('SECP256R1', first.publicKey, 'SHA2-256', message, signature), 'the imported key')
  const fresh = nativeEngine.ecdsaSign('SECP256R1', Uint8Array.from(second.privateKey), 'SHA2-256', message)
  t.ok(nativeEngine.ecdsaVerify('SECP256R1', second.publicKey, 'SHA2-256', message, fresh), 'a new array, a new import')
  const seed = new Uint8Array(32).fill(1)
  const edSignature = nativeEngine.eddsaSign('Ed25519', seed, message, new Uint8Array(0))
  seed.fill(2)
  t.equal(
    Buffer.from(nativeEngine.eddsaSign('Ed25519', seed, message, new Uint8Array(0))).toString('hex'),
    Buffer.from(edSignature).toString('hex'),
    'Ed25519 too',
  )
})
