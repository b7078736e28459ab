// The known-answer tests: both engines and the post-quantum implementation pass them, a broken
// one fails exactly the ones its fault touches, and chooseEngine falls back to noble when native
// fails and counts post-quantum failures whichever engine it picks.
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'
import t from 'tap'
import {
  chooseEngine,
  KAT_NAMES,
  nativeEngine,
  nobleEngine,
  POST_QUANTUM_KAT_NAMES,
  postQuantum as defaultPostQuantum,
  runKats,
  runPostQuantumKats,
  SHARED_KAT_NAMES,
  type CryptoEngine,
  type PostQuantum,
} from '../hal/crypto/index.js'

const isEddsa = (name: string) => name.startsWith('RFC 8032') || name.startsWith('Ed25519ph with context')
const flipFirstByte = (data: Uint8Array) => Uint8Array.of(data[0]! ^ 0x01, ...data.subarray(1))
const flipLastByte = (data: Uint8Array) => Uint8Array.of(...data.subarray(0, -1), data.at(-1)! ^ 0x01)

/** Engines with one deliberate fault each, wrapping a sound one. */
const broken = {
  gcmTag: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    aesGcmEncrypt: (...args) => {
      const sealed = e.aesGcmEncrypt(...args)
      return { ...sealed, tag: flipFirstByte(sealed.tag) }
    },
  }),
  // GCM is CTR underneath, so encrypting the ciphertext decrypts it without checking the tag.
  gcmNoTagCheck: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    aesGcmDecrypt: (key, nonce, ciphertext, _tag, aad) => e.aesGcmEncrypt(key, nonce, ciphertext, aad).ciphertext,
  }),
  cbcNoPaddingCheck: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    aesCbcDecrypt: (...args) => {
      try {
        return e.aesCbcDecrypt(...args)
      } catch {
        return new Uint8Array(0)
      }
    },
  }),
  ecbDecrypt: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    aesEcbDecrypt: (...args) => flipFirstByte(e.aesEcbDecrypt(...args)),
  }),
  ecdh: (e: CryptoEngine): CryptoEngine => ({ ...e, ecdh: (...args) => flipFirstByte(e.ecdh(...args)) }),
  hkdf: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    hkdfSha256: (...args) => flipFirstByte(e.hkdfSha256(...args)),
  }),
  throwing: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    generateKeyPair: () => {
      throw new Error('no entropy')
    },
  }),
  publicKey: (e: CryptoEngine): CryptoEngine => ({ ...e, publicKey: (...args) => flipLastByte(e.publicKey(...args)) }),
  // The last byte of a DER signature is the low byte of s.
  ecdsaSign: (e: CryptoEngine): CryptoEngine => ({ ...e, ecdsaSign: (...args) => flipLastByte(e.ecdsaSign(...args)) }),
  ecdsaVerifyAll: (e: CryptoEngine): CryptoEngine => ({ ...e, ecdsaVerify: () => true }),
  ecdsaSignSha256Only: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    ecdsaSign: (curve, key, _digest, message) => e.ecdsaSign(curve, key, 'SHA2-256', message),
  }),
  eddsaPublicKey: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    eddsaPublicKey: (...args) => flipFirstByte(e.eddsaPublicKey(...args)),
  }),
  eddsaSign: (e: CryptoEngine): CryptoEngine => ({ ...e, eddsaSign: (...args) => flipFirstByte(e.eddsaSign(...args)) }),
  eddsaVerifyAll: (e: CryptoEngine): CryptoEngine => ({ ...e, eddsaVerify: () => true }),
  digest: (e: CryptoEngine): CryptoEngine => ({ ...e, digest: (...args) => flipFirstByte(e.digest(...args)) }),
  hmac: (e: CryptoEngine): CryptoEngine => ({ ...e, hmac: (...args) => flipFirstByte(e.hmac(...args)) }),
  keyWrap: (e: CryptoEngine): CryptoEngine => ({ ...e, aesKeyWrap: (...args) => flipLastByte(e.aesKeyWrap(...args)) }),
  // RFC 3394 without its integrity check: decrypt and keep whatever comes out.
  unwrapNoCheck: (e: CryptoEngine): CryptoEngine => ({
    ...e,
    aesKeyUnwrap: (kek, wrapped, iv) => {
      try {
        return e.aesKeyUnwrap(kek, wrapped, iv)
      } catch {
        return new Uint8Array(wrapped.length - 8)
      }
    },
  }),
}

/** Post-quantum implementations with one deliberate fault each. */
const brokenPq = {
  decapsulate: (pq: PostQuantum): PostQuantum => ({
    ...pq,
    mlKemDecapsulate: (...args) => flipFirstByte(pq.mlKemDecapsulate(...args)),
  }),
  verifyAll: (pq: PostQuantum): PostQuantum => ({ ...pq, mlDsaVerify: () => true }),
  keyPair: (pq: PostQuantum): PostQuantum => ({
    ...pq,
    mlKemKeyPair: (...args) => ({ ...pq.mlKemKeyPair(...args), secretKey: new Uint8Array(0) }),
  }),
}

t.test('every KAT passes on both engines', async (t) => {
  for (const engine of [nativeEngine, nobleEngine]) {
    t.same(runKats(engine), { ok: true, failed: [] }, `${engine.name}: ${KAT_NAMES.length} KATs`)
  }
})

t.test('the KATs cover every standard vector set the device relies on', async (t) => {
  const expected = [
    ...['F.1.1', 'F.1.2', 'F.1.3', 'F.1.4', 'F.1.5', 'F.1.6'].map((s) => `SP 800-38A ${s} ECB-AES`),
    ...['F.2.1', 'F.2.2', 'F.2.3', 'F.2.4', 'F.2.5', 'F.2.6'].map((s) => `SP 800-38A ${s} CBC-AES`),
    ...[1, 2, 3, 4, 6, 7, 8, 10, 12, 13, 14, 15, 16, 18].map((n) => `GCM test case ${n} (`),
    'GCM derived 16-byte IV (AES-128',
    'GCM derived 16-byte IV (AES-256',
    'RFC 7748 §6.1 X25519',
    'RFC 7748 §6.2 X448',
    'RFC 5903 §8.1 ECDH P-256',
    'RFC 5903 §8.2 ECDH P-384',
    'RFC 5903 §8.3 ECDH P-521',
    'ECDH secp256k1',
    ...['A.1', 'A.2', 'A.3'].map((s) => `RFC 5869 ${s} HKDF-SHA256`),
    ...['1', '2', '3'].map((n) => `RFC 8032 §7.1 Ed25519 test ${n}`),
    'RFC 8032 §7.2 Ed25519ctx',
    'RFC 8032 §7.3 Ed25519ph',
    'Ed25519ph with context "foo"',
    'RFC 8032 §7.4 Ed448 test 1',
    'RFC 8032 §7.4 Ed448 test 3, context',
    'RFC 8032 §7.5 Ed448ph',
    ...['P-256,SHA-256', 'P-384,SHA-384', 'P-521,SHA-512'].map((s) => `FIPS 186-3 SigVer [${s}] (valid)`),
    'secp256k1 SigGen',
    ...['SECP256R1', 'SECP384R1', 'SECP521R1', 'SECP256K1'].flatMap((curve) =>
      ['256', '384', '512'].map((bits) => `ECDSA ${curve} SHA2-${bits} sign then verify`),
    ),
    ...['256', '384', '512'].map((bits) => `SHA2-${bits}("abc")`),
    ...['256', '384', '512'].map((bits) => `SHA3-${bits}("abc")`),
    ...[1, 2, 4, 6].flatMap((n) => ['256', '384', '512'].map((bits) => `RFC 4231 test case ${n} HMAC-SHA2-${bits}`)),
    ...['256', '384', '512'].map((bits) => `NIST HMAC_SHA3-${bits} sample 1 HMAC-SHA3-${bits}`),
    ...['4.1', '4.2', '4.3', '4.4', '4.5', '4.6'].flatMap((s) => [`RFC 3394 §${s}`]),
    'Key wrap with an 8-byte IV',
    'SP 800-38F KW-AD AES-128 COUNT 1 (FAIL) is refused',
  ]
  for (const prefix of expected)
    t.ok(
      KAT_NAMES.some((name) => name.startsWith(prefix)),
      prefix,
    )
  t.ok(
    KAT_NAMES.some((name) => name.includes('60-byte IV')),
    'a GCM vector with a non-96-bit IV',
  )
  t.equal(new Set(KAT_NAMES).size, KAT_NAMES.length, 'names are unique')
  for (const section of ['4.1', '4.6'])
    for (const direction of ['wrap', 'unwrap'])
      t.ok(
        KAT_NAMES.includes(
          `RFC 3394 §${section} ${section === '4.1' ? 128 : 256} bits of key data with a ${
            section === '4.1' ? 128 : 256
          }-bit KEK ${direction}`,
        ),
        `RFC 3394 §${section} ${direction}`,
      )
  t.equal(KAT_NAMES.length, 157)
})

t.test('a broken engine fails exactly the KATs its fault touches', async (t) => {
  const cases: [keyof typeof broken, (name: string) => boolean][] = [
    ['gcmTag', (name) => name.startsWith('GCM') && name.endsWith(' encrypt')],
    ['gcmNoTagCheck', (name) => name.endsWith('with a flipped tag bit is refused')],
    ['cbcNoPaddingCheck', (name) => name.endsWith('without the padding block is refused')],
    ['ecbDecrypt', (name) => /^SP 800-38A F\.1\.[246] /.test(name)],
    ['ecdh', (name) => name.endsWith(' shared secret')],
    ['hkdf', (name) => name.startsWith('RFC 5869')],
    ['throwing', (name) => name.endsWith(' public keys')],
    ['publicKey', (name) => name.endsWith(' public key of the private key') || name.endsWith(' public key of d')],
    ['ecdsaSign', (name) => name.includes(' sign then verify ')],
    ['ecdsaVerifyAll', (name) => name.endsWith(' changed)') || name.includes(' sign then verify ')],
    ['ecdsaSignSha256Only', (name) => / sign then verify /.test(name) && !name.includes(' SHA2-256 ')],
    ['eddsaPublicKey', (name) => isEddsa(name) && name.endsWith(' public key')],
    ['eddsaSign', (name) => isEddsa(name) && name.endsWith(' sign')],
    ['eddsaVerifyAll', (name) => isEddsa(name) && name.endsWith('refuse a flipped bit')],
    ['digest', (name) => name.includes('("abc")')],
    ['hmac', (name) => name.includes(' HMAC-SHA')],
    ['keyWrap', (name) => name.endsWith(' wrap')],
    ['unwrapNoCheck', (name) => /^(RFC 3394|SP 800-38F).* is refused$/.test(name)],
  ]
  for (const [fault, touched] of cases) {
    const result = runKats(broken[fault](nativeEngine))
    t.equal(result.ok, false, fault)
    t.same(result.failed, KAT_NAMES.filter(touched), `${fault}: the failed list`)
  }
})

t.test('chooseEngine uses native when its KATs pass', async (t) => {
  let fallbackChecked: Promise<void> | undefined
  const choice = chooseEngine(undefined, (run) => (fallbackChecked = run()))
  await fallbackChecked
  t.equal(choice.engine, nativeEngine)
  t.same(choice.failed, [])
  t.same(choice.kats, {
    native: { ok: true, failed: [] },
    noble: { ok: true, failed: [] },
    postQuantum: { ok: true, failed: [] },
  })
})

t.test('the post-quantum KATs pass, every parameter set, and boot runs one set per scheme', async (t) => {
  t.same(runPostQuantumKats(defaultPostQuantum, { every: true }), { ok: true, failed: [] })
  t.equal(POST_QUANTUM_KAT_NAMES.length, 15, '3 ML-KEM KATs and 2 ML-DSA KATs per parameter set')
  const boot = runPostQuantumKats(brokenPq.verifyAll(defaultPostQuantum))
  t.same(boot.failed, ['MLDSA65 deterministic sign, verify, and refuse a flipped bit'])
})

t.test('a broken post-quantum implementation fails exactly the KATs its fault touches', async (t) => {
  const cases: [keyof typeof brokenPq, (name: string) => boolean][] = [
    ['decapsulate', (name) => name.includes(' decapsulate')],
    ['verifyAll', (name) => name.includes(' deterministic sign')],
    // The encapsulate and decapsulate KATs use only the public key, or the secret key: both touched but keyGen.
    ['keyPair', (name) => name.startsWith('MLKEM') && !name.includes(' encapsulate')],
  ]
  for (const [fault, touched] of cases) {
    const result = runPostQuantumKats(brokenPq[fault](defaultPostQuantum), { every: true })
    t.same(result.failed, POST_QUANTUM_KAT_NAMES.filter(touched), fault)
  }
})

t.test('chooseEngine counts post-quantum failures whichever engine it picks', async (t) => {
  const postQuantum = brokenPq.decapsulate(defaultPostQuantum)
  const expected = ['MLKEM768 decapsulate, and reject a flipped bit implicitly']
  const native = chooseEngine(undefined, () => {}, { postQuantum })
  t.equal(native.engine, nativeEngine)
  t.same(native.failed, expected, 'the device raises fls 0x01')
  t.same(native.kats.postQuantum?.failed, expected)
  const noble = chooseEngine({ native: broken.hmac(nativeEngine), noble: nobleEngine }, () => {}, { postQuantum })
  t.equal(noble.engine, nobleEngine)
  t.same(noble.failed, expected)
})

t.test('the KATs of code the engines share are the EdDSA variants native hands to noble', async (t) => {
  t.same(
    [...SHARED_KAT_NAMES],
    KAT_NAMES.filter(
      (name) =>
        (/^RFC 8032 §7\.[2-5] /.test(name) || name.startsWith('Ed25519ph with context')) &&
        !/§7\.4 Ed448 test 1 /.test(name) &&
        (name.endsWith(' sign') || name.endsWith(' refuse a flipped bit')),
    ),
  )
  t.same(runKats(broken.eddsaSign(nativeEngine), { shared: false }).failed, [
    'RFC 8032 §7.1 Ed25519 test 1 sign',
    'RFC 8032 §7.1 Ed25519 test 2 sign',
    'RFC 8032 §7.1 Ed25519 test 3 sign',
    'RFC 8032 §7.4 Ed448 test 1 sign',
  ])
})

t.test('with onLateFailure, shared and post-quantum KATs run later and report there', async (t) => {
  const deferred: (() => Promise<void>)[] = []
  const late: string[][] = []
  const noble = broken.eddsaSign(broken.hkdf(nobleEngine))
  const choice = chooseEngine({ native: nativeEngine, noble }, (run) => deferred.push(run), {
    postQuantum: brokenPq.verifyAll(defaultPostQuantum),
    onLateFailure: (failed) => late.push(failed),
  })
  t.equal(choice.engine, nativeEngine)
  t.same(choice.failed, [], 'nothing failed yet')
  t.same(choice.kats, { native: { ok: true, failed: [] } }, 'only the native engine ran')
  await deferred[0]!()
  const expected = [
    ...KAT_NAMES.filter((name) => SHARED_KAT_NAMES.has(name) && name.endsWith(' sign')),
    'MLDSA65 deterministic sign, verify, and refuse a flipped bit',
  ]
  t.same(late, [expected], "noble's failures in its own code (HKDF) are not the device's")
  t.same(choice.failed, expected, 'and they join the choice')
  t.equal(choice.kats.noble?.ok, false)
})

t.test('settle runs the deferred KATs at once, and only once', async (t) => {
  const deferred: (() => Promise<void>)[] = []
  const late: string[][] = []
  const choice = chooseEngine(undefined, (run) => deferred.push(run), {
    postQuantum: brokenPq.verifyAll(defaultPostQuantum),
    onLateFailure: (failed) => late.push(failed),
  })
  t.same(late, [], 'deferred')
  choice.settle()
  t.equal(late.length, 1, 'a user of the deferred code ran its KATs first')
  t.ok(choice.failed.includes('MLDSA65 deterministic sign, verify, and refuse a flipped bit'))
  await deferred[0]!()
  choice.settle()
  t.equal(late.length, 1, 'the timer and a second user do not run them again')
})

t.test('a second boot in the process keeps the deferred verdicts, a failure included', async (t) => {
  let pqCalls = 0
  const faulty = brokenPq.verifyAll(defaultPostQuantum)
  const postQuantum = new Proxy(faulty, {
    get: (target, key) => {
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? (...args: unknown[]) => (pqCalls++, value.apply(target, args)) : value
    },
  })
  const boot = () => {
    const late: string[][] = []
    const choice = chooseEngine(undefined, () => {}, { postQuantum, onLateFailure: (failed) => late.push(failed) })
    choice.settle()
    return late
  }
  const first = boot()
  const calls = pqCalls
  t.ok(calls > 0, 'the first boot ran the post-quantum KATs')
  t.same(boot(), first, 'the second reports the same failure')
  t.equal(pqCalls, calls, 'without running them again')
})

t.test("with onLateFailure, the native engine's signature, HMAC and wrap KATs wait for settle", async (t) => {
  const late: string[][] = []
  const choice = chooseEngine({ native: broken.hmac(nativeEngine), noble: nobleEngine }, () => {}, {
    onLateFailure: (failed) => late.push(failed),
  })
  t.equal(choice.engine.name, 'native', 'the boot ran only the KATs of code a boot uses')
  t.same(choice.failed, [])
  choice.settle()
  t.equal(late.length, 1, 'the first key command runs them')
  t.ok(late[0]!.length > 0 && late[0]!.every((name) => KAT_NAMES.includes(name)))
  t.same(choice.failed, late[0], 'and a failure counts against the engine in use')
})

t.test("settle runs the shared and post-quantum KATs only; noble's own suite waits for the timer", async (t) => {
  const deferred: (() => Promise<void>)[] = []
  let hkdfCalls = 0
  const noble: CryptoEngine = {
    ...nobleEngine,
    hkdfSha256: (...args) => {
      hkdfCalls++
      return nobleEngine.hkdfSha256(...args)
    },
  }
  const choice = chooseEngine({ native: nativeEngine, noble }, (run) => deferred.push(run), {
    onLateFailure: () => t.fail('nothing is broken'),
  })
  choice.settle()
  t.equal(hkdfCalls, 0, "settle did not run noble's own KATs (HKDF among them)")
  t.equal(choice.kats.noble, undefined)
  t.equal(choice.kats.postQuantum?.ok, true, 'the post-quantum KATs ran')
  await deferred[0]!()
  t.ok(hkdfCalls > 0, 'the timer ran them')
  t.same(choice.kats.noble, { ok: true, failed: [] })
})

t.test('the post-quantum KATs generate each key pair once per run', async (t) => {
  const calls = { kem: 0, dsa: 0 }
  const counting: PostQuantum = {
    ...defaultPostQuantum,
    mlKemKeyPair: (...args) => (calls.kem++, defaultPostQuantum.mlKemKeyPair(...args)),
    mlDsaKeyPair: (...args) => (calls.dsa++, defaultPostQuantum.mlDsaKeyPair(...args)),
  }
  t.same(runPostQuantumKats(counting, { every: true }), { ok: true, failed: [] })
  t.same(calls, { kem: 3, dsa: 3 }, 'one per parameter set')
})

t.test('ML-DSA signing is hedged: the random bytes reach the signature as FIPS 204 rnd', async (t) => {
  const { publicKey, secretKey } = defaultPostQuantum.mlDsaKeyPair('MLDSA65', new Uint8Array(32).fill(4))
  const message = new TextEncoder().encode('hemd hedged')
  const context = Uint8Array.of(7)
  const rnd = new Uint8Array(32).fill(0x5a)
  const hedged = defaultPostQuantum.mlDsaSign('MLDSA65', secretKey, message, context, () => Uint8Array.from(rnd))
  const expected = ml_dsa65.sign(message, secretKey, { context, extraEntropy: rnd })
  t.equal(Buffer.from(hedged).toString('hex'), Buffer.from(expected).toString('hex'), "noble's sign with rnd")
  const deterministic = defaultPostQuantum.mlDsaSign('MLDSA65', secretKey, message, context, (n) => new Uint8Array(n))
  t.not(Buffer.from(hedged).toString('hex'), Buffer.from(deterministic).toString('hex'), 'not the deterministic one')
  t.ok(defaultPostQuantum.mlDsaVerify('MLDSA65', publicKey, message, hedged, context))
})

t.test('with onLateFailure and nothing broken, nothing is reported', async (t) => {
  const late: string[][] = []
  const choice = chooseEngine(undefined, undefined, { onLateFailure: (failed) => late.push(failed) })
  t.same(late, [])
  t.same(choice.failed, [])
  t.equal(choice.kats.postQuantum?.ok, true)
})
