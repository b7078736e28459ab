// The client library's crypto calls (sign, verify, HMAC, ECDH, wrap, ML-KEM, ML-DSA, derive): what
// they check before sending and how they encode, against a recording server; then each against a
// real device, with an independent implementation on the host where one exists.
import { createHash, createPublicKey, generateKeyPairSync, verify as nodeVerify } from 'node:crypto'
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js'
import t from 'tap'
import {
  BadRequestError,
  CryptoInputError,
  ForbiddenError,
  HemClient,
  NotAcceptableError,
  UnexpectedAnswerError,
} from '../client/index.js'
import { owned, ownerClient } from './helpers/owner.js'
import { recordingClient } from './helpers/recording-device.js'

const bytes = (...values: number[]) => new Uint8Array(values)
const b64 = (data: Uint8Array) => Buffer.from(data).toString('base64')
const kid = 'a'.repeat(32)
const peerKid = 'b'.repeat(32)

t.test('each call sends its route the fields in base64 with the token of the scope it needs', async (t) => {
  const answers: Record<string, unknown> = {
    '/api/crypto/exdsa/sign': { sign: b64(bytes(0x30, 1, 2)) },
    '/api/crypto/hmac/hash': { mac: b64(bytes(9, 9)) },
    '/api/crypto/ecdh': { ecdh: b64(bytes(7)) },
    '/api/crypto/cipher/wrap': { wrapped: b64(new Uint8Array(24)) },
    '/api/crypto/cipher/unwrap': { unwrapped: b64(new Uint8Array(16)) },
    '/api/crypto/pqc/mlkem/encaps': { alg: 'MLKEM512', ss: b64(new Uint8Array(32).fill(1)), ct: b64(bytes(2)) },
    '/api/crypto/pqc/mlkem/decaps': { alg: 'MLKEM768', ss: b64(new Uint8Array(32).fill(3)) },
    '/api/crypto/pqc/mldsa/sign': { alg: 'MLDSA44', sign: b64(bytes(4, 4)) },
    '/api/keymgmt/derive': { kid: peerKid },
    '/api/keymgmt/create': { kid },
  }
  const { seen, client } = await recordingClient(t, ({ path }) =>
    path in answers ? { status: 200, body: answers[path] } : { status: 200 },
  )
  const msg = new Uint8Array(Buffer.from('a message'))
  const use = `keymgmt:use:${kid}`

  t.same(await client.sign({ kid, msg, alg: 'Ed448', ctx: bytes(1, 2) }), bytes(0x30, 1, 2))
  t.same(seen.at(-1), {
    method: 'POST',
    path: '/api/crypto/exdsa/sign',
    token: use,
    body: { kid, alg: 'Ed448', msg: b64(msg), ctx: 'AQI=' },
  })
  t.equal(await client.verifySignature({ kid, msg, alg: 'SHA256WithECDSA', signature: bytes(0x30, 0) }), true)
  t.same(seen.at(-1)!.body, { kid, alg: 'SHA256WithECDSA', msg: b64(msg), sign: 'MAA=' })

  t.same(await client.hmac({ kid, msg }), bytes(9, 9))
  t.same(seen.at(-1)!.body, { kid, msg: b64(msg) }, 'an HMAC key needs no alg')
  t.equal(await client.hmacVerify({ kid, msg, alg: 'SHA3-256', extKid: peerKid, mac: bytes(9, 9) }), true)
  t.same(seen.at(-1), {
    method: 'POST',
    path: '/api/crypto/hmac/verify',
    token: use,
    body: { kid, msg: b64(msg), alg: 'SHA3-256', ext_kid: peerKid, mac: 'CQk=' },
  })

  const pubkey = new Uint8Array(32).fill(5)
  t.same(await client.ecdh({ kid, pubkey, alg: 'SHA2-512' }), bytes(7))
  t.same(seen.at(-1)!.body, { kid, pubkey: b64(pubkey), alg: 'SHA2-512' })

  const key = new Uint8Array(16).fill(6)
  t.same(
    await client.wrap({ kid, msg: key, alg: 'AES128', ctx: bytes(1), iv: new Uint8Array(8).fill(0xa6) }),
    new Uint8Array(24),
  )
  t.same(seen.at(-1)!.body, { kid, msg: b64(key), alg: 'AES128', ctx: 'AQ==', iv: 'pqampqampqY=' })
  t.same(await client.unwrap({ kid, msg: new Uint8Array(24) }), new Uint8Array(16))
  t.equal(seen.at(-1)!.path, '/api/crypto/cipher/unwrap')

  t.same(await client.mlKemEncapsulate(kid), {
    alg: 'MLKEM512',
    sharedSecret: new Uint8Array(32).fill(1),
    ciphertext: bytes(2),
  })
  t.same(seen.at(-1)!.body, { kid })
  const ct = new Uint8Array(1088).fill(8)
  t.same(await client.mlKemDecapsulate(kid, ct), { alg: 'MLKEM768', sharedSecret: new Uint8Array(32).fill(3) })
  t.same(seen.at(-1)!.body, { kid, ct: b64(ct) })
  t.same(await client.mlDsaSign({ kid, msg }), { alg: 'MLDSA44', signature: bytes(4, 4) })
  t.same(seen.at(-1)!.body, { kid, msg: b64(msg) }, 'no ctx: none sent')
  t.equal(await client.mlDsaVerify({ kid, msg, signature: bytes(4, 4), ctx: new Uint8Array(0) }), true)
  t.same(seen.at(-1)!.body, { kid, msg: b64(msg), sign: 'BAQ=', ctx: '' })

  t.same(
    await client.deriveKey({ kid, label: 'derived', type: 'SECP256K1', mode: 'ECDH,ExDSA', pubkey, descr: bytes(1) }),
    { kid: peerKid },
  )
  t.same(seen.at(-1), {
    method: 'POST',
    path: '/api/keymgmt/derive',
    token: 'keymgmt:derive',
    body: { kid, label: 'derived', type: 'SECP256K1', mode: 'ECDH,ExDSA', descr: 'AQ==', pubkey: b64(pubkey) },
  })
  await client.createKey({ label: 'sdk', type: 'MLDSA65', mode: 'MLDSA65' })
  t.same(
    seen.at(-1),
    {
      method: 'POST',
      path: '/api/keymgmt/create',
      token: 'keymgmt:gen',
      body: { label: 'sdk', type: 'MLDSA65', mode: 'MLDSA65' },
    },
    "mode goes as given: the device ignores it where it means nothing (the JS SDK's habit)",
  )
})

t.test('a verify is false on 406 and throws on any other refusal', async (t) => {
  let status = 406
  const { client } = await recordingClient(t, () => ({ status, body: { error: 'x', message: 'y' } }))
  const msg = bytes(1)
  const calls = [
    () => client.verifySignature({ kid, msg, alg: 'Ed25519', signature: new Uint8Array(64) }),
    () => client.hmacVerify({ kid, msg, mac: new Uint8Array(32) }),
    () => client.mlDsaVerify({ kid, msg, signature: new Uint8Array(2420) }),
  ]
  for (const call of calls) t.equal(await call(), false)
  status = 400
  for (const call of calls) await t.rejects(call(), BadRequestError)
  status = 403
  for (const call of calls) await t.rejects(call(), ForbiddenError)
  status = 406
  await t.rejects(client.sign({ kid, msg, alg: 'Ed25519' }), NotAcceptableError, 'a sign refused is an error')
})

t.test('an answer without its field, or not base64, is no answer of the API', async (t) => {
  let body: unknown = {}
  const { client } = await recordingClient(t, () => ({ status: 200, body }))
  await t.rejects(client.sign({ kid, msg: bytes(1), alg: 'Ed25519' }), UnexpectedAnswerError)
  body = { sign: 'not base64!' }
  await t.rejects(client.sign({ kid, msg: bytes(1), alg: 'Ed25519' }), UnexpectedAnswerError)
  body = { alg: 'MLKEM768', ss: b64(bytes(1)) }
  await t.rejects(client.mlKemEncapsulate(kid), /no ct string/)
})

t.test('bad input is refused before anything is sent, naming the field but not its bytes', async (t) => {
  const { seen, client } = await recordingClient(t, () => ({ status: 200, body: {} }))
  const msg = bytes(1)
  const long = new Uint8Array(2049)
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    ['a KID in upper case', () => client.sign({ kid: 'A'.repeat(32), msg, alg: 'Ed25519' }), /kid must be a KID/],
    ['an unknown alg', () => client.sign({ kid, msg, alg: 'Ed25519bis' as 'Ed25519' }), /alg must be one of/],
    ['an empty message', () => client.sign({ kid, msg: new Uint8Array(0), alg: 'Ed25519' }), /msg must be 1 to 2048/],
    ['2049 bytes', () => client.hmac({ kid, msg: long }), /msg must be 1 to 2048 bytes, not 2049/],
    [
      'a string for bytes',
      () => client.hmac({ kid, msg: 'text' as unknown as Uint8Array }),
      /msg must be a Uint8Array/,
    ],
    ['Ed25519ctx without ctx', () => client.sign({ kid, msg, alg: 'Ed25519ctx' }), /Ed25519ctx needs a context/],
    ['a 256-byte ctx', () => client.sign({ kid, msg, alg: 'Ed448', ctx: new Uint8Array(256) }), /ctx must be 0 to 255/],
    [
      'a 513-byte signature',
      () => client.verifySignature({ kid, msg, alg: 'Ed448', signature: new Uint8Array(513) }),
      /signature must be 1 to 512/,
    ],
    ['an empty MAC', () => client.hmacVerify({ kid, msg, mac: new Uint8Array(0) }), /mac must be 1 to 64/],
    ['an HMAC in ECDH mode without alg', () => client.hmac({ kid, msg, extKid: peerKid }), /needs alg/],
    [
      'an unknown digest',
      () => client.ecdh({ kid, extKid: peerKid, alg: 'MD5' as 'SHA2-256' }),
      /alg must be one of SHA2-256/,
    ],
    ['both peers', () => client.ecdh({ kid, extKid: peerKid, pubkey: new Uint8Array(32) }), /not both/],
    ['no peer', () => client.ecdh({ kid }), /the peer is needed/],
    ['a 31-byte public key', () => client.ecdh({ kid, pubkey: new Uint8Array(31) }), /pubkey must be a raw X25519/],
    ['a bad peer KID', () => client.ecdh({ kid, extKid: 'peer' }), /extKid must be a KID/],
    ['wrap of 8 bytes', () => client.wrap({ kid, msg: new Uint8Array(8) }), /msg must be 16 to 2048 bytes, not 8/],
    ['wrap of 20 bytes', () => client.wrap({ kid, msg: new Uint8Array(20) }), /multiple of 8/],
    ['unwrap of 16 bytes', () => client.unwrap({ kid, msg: new Uint8Array(16) }), /msg must be 24 to 2056/],
    [
      'an AES512 KEK',
      () => client.wrap({ kid, msg: new Uint8Array(16), alg: 'AES512' as 'AES256' }),
      /alg must be one of AES128/,
    ],
    ['a 7-byte IV', () => client.wrap({ kid, msg: new Uint8Array(16), iv: new Uint8Array(7) }), /iv must be 8 bytes/],
    [
      'a 65-byte wrap ctx',
      () => client.wrap({ kid, msg: new Uint8Array(16), ctx: new Uint8Array(65) }),
      /ctx must be 0 to 64/,
    ],
    ['a 1000-byte KEM ciphertext', () => client.mlKemDecapsulate(kid, new Uint8Array(1000)), /768, 1088, 1568 bytes/],
    ['a bad KEM KID', () => client.mlKemEncapsulate('nope'), /kid must be a KID/],
    [
      'a 5001-byte ML-DSA signature',
      () => client.mlDsaVerify({ kid, msg, signature: new Uint8Array(5001) }),
      /signature must be 1 to 5000/,
    ],
    [
      'an ML-KEM derive target',
      () => client.deriveKey({ kid, label: 'x', type: 'MLKEM768', extKid: peerKid }),
      /derivable key type/,
    ],
    ['a derive without peer', () => client.deriveKey({ kid, label: 'x', type: 'AES256' }), /the peer is needed/],
    ['a 65-byte descr', () => client.createKey({ label: 'x', type: 'AES256', descr: new Uint8Array(65) }), /descr/],
  ]
  for (const [what, call, message] of cases) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    )
    t.type(err, CryptoInputError, what)
    t.type(err, RangeError, `${what}: a RangeError, as a bad KID always was`)
    t.match((err as Error)?.message, message, what)
  }
  t.equal(seen.length, 0, 'nothing reached the device')
})

t.test('against a device: every operation, checked on the host where it can be', async (t) => {
  const o = await owned(t, { variant: 'E' })
  const client = ownerClient(o.https)
  const msg = new Uint8Array(Buffer.from('pay 10 EUR to Ada'))
  const flipped = (data: Uint8Array) => Uint8Array.from(data, (b, i) => (i === 0 ? b ^ 1 : b))

  await t.test('ECDSA and EdDSA: sign, verify on the host and the device, a flipped bit fails', async (t) => {
    const { kid: ed } = await client.createKey({ label: 'ed', type: 'ED25519', mode: 'ExDSA' })
    const signature = await client.sign({ kid: ed, msg, alg: 'Ed25519' })
    t.equal(signature.length, 64)
    const raw = Buffer.from((await client.getKey(ed, { use: true })).pubkey!, 'base64')
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw])
    const edPublic = createPublicKey({ key: spki, format: 'der', type: 'spki' })
    t.ok(nodeVerify(null, msg, edPublic, signature), 'node:crypto verifies the device signature')
    t.equal(await client.verifySignature({ kid: ed, msg, alg: 'Ed25519', signature }), true)
    t.equal(await client.verifySignature({ kid: ed, msg, alg: 'Ed25519', signature: flipped(signature) }), false)

    const { kid: ec } = await client.createKey({ label: 'ec', type: 'SECP256R1', mode: 'ECDH,ExDSA' })
    const der = await client.sign({ kid: ec, msg, alg: 'SHA384WithECDSA' })
    t.equal(der[0], 0x30, 'a DER SEQUENCE')
    t.equal(await client.verifySignature({ kid: ec, msg, alg: 'SHA384WithECDSA', signature: der }), true)
    t.equal(await client.verifySignature({ kid: ec, msg: flipped(msg), alg: 'SHA384WithECDSA', signature: der }), false)
    const { kid: ecdhOnly } = await client.createKey({ label: 'ecdh only', type: 'SECP256R1' })
    await t.rejects(client.sign({ kid: ecdhOnly, msg, alg: 'SHA256WithECDSA' }), NotAcceptableError)
  })

  await t.test('HMAC: an HMAC key, and ECDH mode with the raw secret as the key', async (t) => {
    const { kid: mac } = await client.createKey({ label: 'mac', type: 'SHA3-256', mode: 'SHA3-256' })
    const tag = await client.hmac({ kid: mac, msg })
    t.equal(tag.length, 32)
    t.equal(await client.hmacVerify({ kid: mac, msg, mac: tag }), true)
    t.equal(await client.hmacVerify({ kid: mac, msg, mac: flipped(tag) }), false)

    const { kid: x } = await client.createKey({ label: 'x', type: 'CURVE25519', mode: 'ECDH' })
    const peer = generateKeyPairSync('x25519')
    const pubkey = new Uint8Array(peer.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32))
    const viaPeer = await client.hmac({ kid: x, msg, pubkey, alg: 'SHA2-256' })
    t.equal(await client.hmacVerify({ kid: x, msg, pubkey, alg: 'SHA2-256', mac: viaPeer }), true)
    const secret = await client.ecdh({ kid: x, pubkey })
    t.equal(secret.length, 32, 'X25519: the whole secret is its first 32 bytes')
    t.same(
      await client.ecdh({ kid: x, pubkey, alg: 'SHA2-256' }),
      new Uint8Array(createHash('sha256').update(secret).digest()),
      'with alg: that digest of the secret',
    )
  })

  await t.test('key wrap: wrap, unwrap, a flipped bit fails the integrity check', async (t) => {
    const { kid: kek } = await client.createKey({ label: 'kek', type: 'AES256' })
    const key = new Uint8Array(32).map((_, i) => i)
    const wrapped = await client.wrap({ kid: kek, msg: key })
    t.equal(wrapped.length, 40)
    t.same(await client.unwrap({ kid: kek, msg: wrapped }), key)
    const iv = new Uint8Array(8).fill(1)
    const withIv = await client.wrap({ kid: kek, msg: key, iv, alg: 'AES128' })
    t.same(await client.unwrap({ kid: kek, msg: withIv, iv, alg: 'AES128' }), key)
    await t.rejects(client.unwrap({ kid: kek, msg: flipped(wrapped) }), NotAcceptableError)
  })

  await t.test('ML-KEM: encapsulate on the host to the device key, and on the device', async (t) => {
    const { kid: kem } = await client.createKey({ label: 'kem', type: 'MLKEM768' })
    const mine = await client.mlKemEncapsulate(kem)
    t.match(mine, { alg: 'MLKEM768' })
    t.equal(mine.ciphertext.length, 1088)
    t.same(await client.mlKemDecapsulate(kem, mine.ciphertext), { alg: 'MLKEM768', sharedSecret: mine.sharedSecret })
    const publicKey = new Uint8Array(Buffer.from((await client.getKey(kem)).pubkey!, 'base64'))
    const host = ml_kem768.encapsulate(publicKey)
    t.same((await client.mlKemDecapsulate(kem, host.cipherText)).sharedSecret, host.sharedSecret)
  })

  await t.test('ML-DSA: sign and verify with a context', async (t) => {
    const { kid: dsa } = await client.createKey({ label: 'dsa', type: 'MLDSA44' })
    const ctx = new Uint8Array(Buffer.from('invoices'))
    const { alg, signature } = await client.mlDsaSign({ kid: dsa, msg, ctx })
    t.equal(alg, 'MLDSA44')
    t.equal(signature.length, 2420)
    t.equal(await client.mlDsaVerify({ kid: dsa, msg, ctx, signature }), true)
    t.equal(await client.mlDsaVerify({ kid: dsa, msg, signature }), false, 'another context')
    t.equal(await client.mlDsaVerify({ kid: dsa, msg, ctx, signature: flipped(signature) }), false)
  })

  await t.test('derive: a new key from an ECDH; the same derive again clashes', async (t) => {
    const { kid: a } = await client.createKey({ label: 'a', type: 'CURVE448' })
    const { kid: b } = await client.createKey({ label: 'b', type: 'CURVE448' })
    const { kid: derived } = await client.deriveKey({ kid: a, extKid: b, label: 'derived', type: 'ED25519' })
    t.match(await client.getKey(derived), { type: 'ED25519', pubkey: String })
    const signature = await client.sign({ kid: derived, msg, alg: 'Ed25519' })
    t.equal(await client.verifySignature({ kid: derived, msg, alg: 'Ed25519', signature }), true)
    await t.rejects(
      client.deriveKey({ kid: a, extKid: b, label: 'again', type: 'ED25519' }),
      NotAcceptableError,
      'deterministic: the same KID',
    )
    const { kid: aes } = await client.deriveKey({ kid: b, extKid: a, label: 'aes', type: 'AES128' })
    t.match(await client.getKey(aes), { type: 'ATT,AES128' })
  })
})
