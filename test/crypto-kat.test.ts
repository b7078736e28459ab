// The known-answer tests: both engines pass them, a broken engine fails exactly the ones its
// fault touches, and chooseEngine falls back to noble when native fails.
import t from 'tap'
import { chooseEngine, KAT_NAMES, nativeEngine, nobleEngine, runKats, type CryptoEngine } from '../hal/crypto/index.js'

const flipFirstByte = (data: Uint8Array) => Uint8Array.of(data[0]! ^ 0x01, ...data.subarray(1))

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
  t.equal(KAT_NAMES.length, 61)
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
  ]
  for (const [fault, touched] of cases) {
    const result = runKats(broken[fault](nativeEngine))
    t.equal(result.ok, false, fault)
    t.same(result.failed, KAT_NAMES.filter(touched), `${fault}: the failed list`)
  }
})

t.test('chooseEngine uses native when its KATs pass', async (t) => {
  const choice = chooseEngine()
  t.equal(choice.engine, nativeEngine)
  t.same(choice.failed, [])
  t.same(choice.kats, { native: { ok: true, failed: [] }, noble: { ok: true, failed: [] } })
})

t.test('chooseEngine falls back to noble when native fails a KAT', async (t) => {
  const native = broken.hkdf(nativeEngine)
  const choice = chooseEngine({ native, noble: nobleEngine })
  t.equal(choice.engine, nobleEngine)
  t.same(choice.failed, [], 'noble passes, so no fls bit')
  t.same(
    choice.kats.native.failed,
    KAT_NAMES.filter((name) => name.startsWith('RFC 5869')),
  )
  t.equal(choice.kats.noble?.ok, true)
})

t.test("chooseEngine may defer noble's KATs when native passes, never when it fails", async (t) => {
  const deferred: (() => void)[] = []
  const choice = chooseEngine({ native: nativeEngine, noble: broken.ecdh(nobleEngine) }, (run) => deferred.push(run))
  t.equal(choice.engine, nativeEngine)
  t.equal(choice.kats.noble, undefined, 'not run yet')
  t.equal(deferred.length, 1)
  deferred[0]!()
  t.equal(choice.kats.noble?.ok, false, 'run later, with its result')
  const fallback = chooseEngine({ native: broken.hkdf(nativeEngine), noble: nobleEngine }, () => t.fail('not deferred'))
  t.equal(fallback.engine, nobleEngine)
})

t.test('chooseEngine reports the failures of noble when both fail', async (t) => {
  const noble = broken.ecdh(nobleEngine)
  const choice = chooseEngine({ native: broken.gcmTag(nativeEngine), noble })
  t.equal(choice.engine, noble)
  t.same(
    choice.failed,
    KAT_NAMES.filter((name) => name.endsWith(' shared secret')),
    'the device raises fls 0x01',
  )
  t.equal(choice.kats.native.ok, false)
})
