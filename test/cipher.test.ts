// POST /api/crypto/cipher/encrypt and decrypt (device contract §5), against a real device.
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto'
import t from 'tap'
import { LogResult, LogType } from '../protocol/journal.js'
import { ECDH_CURVES, hostPeer } from './helpers/crypto-device.js'
import { readJournal } from './helpers/journal.js'
import { api, b64, bytesOf, createKey, Tokens } from './helpers/keys.js'
import { login, owned } from './helpers/owner.js'

const ALGS = [
  'AES128-ECB',
  'AES128-CBC',
  'AES128-GCM',
  'AES192-ECB',
  'AES192-CBC',
  'AES192-GCM',
  'AES256-ECB',
  'AES256-CBC',
  'AES256-GCM',
]
function aesKey(shared: Buffer, ctx: Buffer, bytes: number): Buffer {
  return Buffer.from(
    hkdfSync('sha256', shared, Buffer.alloc(0), Buffer.concat([Buffer.from('encedo-aes'), ctx]), bytes),
  )
}

t.test('encrypt and decrypt', async (t) => {
  const o = await owned(t)
  const tokens = new Tokens(o.base)
  const gen = await tokens.get('keymgmt:gen')
  const url = (op: string) => `${o.https}/api/crypto/cipher/${op}`
  const aes256 = await createKey(o.https, gen, { label: 'aes256', type: 'AES256' })
  const aes128 = await createKey(o.https, gen, { label: 'aes128', type: 'AES128' })
  const use256 = await tokens.get(`keymgmt:use:${aes256}`)
  const msg = Buffer.from('sixty-four bytes of plaintext: exactly four AES-blocks of messag')

  await t.test('every alg round-trips with a direct AES-256 key', async (t) => {
    for (const alg of ALGS) {
      const plain = alg.endsWith('ECB') ? msg : msg.subarray(0, 50)
      const aad = alg.endsWith('GCM') ? b64(Buffer.alloc(32, 7)) : undefined
      const enc = await api(url('encrypt'), use256, { alg, kid: aes256, msg: b64(plain), ...(aad ? { aad } : {}) })
      t.equal(enc.status, 200, `${alg} encrypt`)
      t.equal(enc.headers['content-type'], 'application/json')
      const { ciphertext, iv, tag } = enc.json
      t.equal(iv === undefined, alg.endsWith('ECB'), `${alg}: an IV exactly when the mode has one`)
      if (iv) t.equal(bytesOf(iv).length, 16, `${alg}: 16-byte IV`)
      t.equal(tag === undefined, !alg.endsWith('GCM'), `${alg}: a tag exactly for GCM`)
      if (tag) t.equal(bytesOf(tag).length, 16)
      const expectedLength = alg.endsWith('CBC') ? 64 : plain.length
      t.equal(bytesOf(ciphertext).length, expectedLength, `${alg}: ciphertext length (PKCS#7 for CBC only)`)
      const dec = await api(url('decrypt'), use256, {
        alg,
        kid: aes256.toUpperCase(),
        msg: ciphertext,
        ...(iv ? { iv } : {}),
        ...(tag ? { tag } : {}),
        ...(aad ? { aad } : {}),
      })
      t.equal(dec.status, 200, `${alg} decrypt (KID in upper case)`)
      t.same(bytesOf(dec.json.plaintext), plain, `${alg}: plaintext back`)
    }
  })

  await t.test('IVs are fresh for every request', async (t) => {
    const seen = new Set<string>()
    for (let i = 0; i < 20; i++)
      seen.add((await api(url('encrypt'), use256, { alg: 'AES256-GCM', kid: aes256, msg: b64(msg) })).json.iv)
    t.equal(seen.size, 20)
  })

  await t.test(
    'a shorter alg uses the leading bytes of a longer key; a longer alg than the key is refused',
    async (t) => {
      const ecb128 = await api(url('encrypt'), use256, { alg: 'AES128-ECB', kid: aes256, msg: b64(msg) })
      const ecb256 = await api(url('encrypt'), use256, { alg: 'AES256-ECB', kid: aes256, msg: b64(msg) })
      t.equal(ecb128.status, 200)
      t.not(ecb128.json.ciphertext, ecb256.json.ciphertext, 'a different key width gives a different ciphertext')
      const use128 = await login(o.base, `keymgmt:use:${aes128}`)
      const wide = await api(url('encrypt'), use128, { alg: 'AES256-GCM', kid: aes128, msg: b64(msg) })
      t.equal(wide.status, 406)
      t.equal(wide.json.error, 'key_too_short')
      t.equal((await api(url('encrypt'), use128, { alg: 'AES192-CBC', kid: aes128, msg: b64(msg) })).status, 406)
      t.equal((await api(url('encrypt'), use128, { alg: 'AES128-CBC', kid: aes128, msg: b64(msg) })).status, 200)
    },
  )

  await t.test('GCM: a changed tag, ciphertext or aad is refused with 406; CBC: bad padding is 406', async (t) => {
    const aad = b64(Buffer.alloc(32, 1))
    const enc = (await api(url('encrypt'), use256, { alg: 'AES256-GCM', kid: aes256, msg: b64(msg), aad })).json
    const tag = bytesOf(enc.tag)
    tag[0]! ^= 1
    for (const [what, body] of [
      ['tag', { ...enc, tag: b64(tag), aad }],
      ['aad', { ...enc, aad: b64(Buffer.alloc(32, 2)) }],
      ['no aad', { ...enc }],
    ] as const) {
      const answer = await api(url('decrypt'), use256, {
        alg: 'AES256-GCM',
        kid: aes256,
        msg: body.ciphertext,
        iv: body.iv,
        tag: body.tag,
        ...('aad' in body ? { aad: body.aad } : {}),
      })
      t.equal(answer.status, 406, what)
      t.equal(answer.json.error, 'authentication_failed', what)
    }
    const cbc = (await api(url('encrypt'), use256, { alg: 'AES256-CBC', kid: aes256, msg: b64(msg) })).json
    const lastBlockGone = b64(bytesOf(cbc.ciphertext).subarray(0, 64))
    const bad = await api(url('decrypt'), use256, { alg: 'AES256-CBC', kid: aes256, msg: lastBlockGone, iv: cbc.iv })
    t.equal(bad.status, 406)
    t.equal(bad.json.error, 'bad_padding')
  })

  await t.test('malformed requests are 400', async (t) => {
    const good = { alg: 'AES256-GCM', kid: aes256, msg: b64(msg) }
    // No readable KID, so no `keymgmt:use:<kid>` scope can match: 403 comes before 400 (§0).
    for (const [what, body] of [
      ['not JSON', '{"alg":'],
      ['an array', '[1]'],
      ['kid malformed', { ...good, kid: 'abc' }],
      ['kid missing', { alg: 'AES256-GCM', msg: b64(msg) }],
    ] as const) {
      const answer = await api(url('encrypt'), use256, body)
      t.equal(answer.status, 403, `${what}: 403`)
    }
    const cases: [string, unknown, string?][] = [
      ['no alg', { kid: aes256, msg: b64(msg) }],
      ['unknown alg', { ...good, alg: 'AES256-CTR' }],
      ['no msg', { alg: 'AES256-GCM', kid: aes256 }],
      ['msg not base64', { ...good, msg: 'not base64!' }],
      ['msg of 2049 bytes', { ...good, msg: b64(Buffer.alloc(2049)) }],
      ['ctx of 65 bytes', { ...good, ctx: b64(Buffer.alloc(65)) }],
      ['aad of 65 bytes', { ...good, aad: b64(Buffer.alloc(65)) }],
      ['aad with CBC', { ...good, alg: 'AES256-CBC', aad: b64(Buffer.alloc(4)) }],
      ['ECB of 15 bytes', { ...good, alg: 'AES256-ECB', msg: b64(Buffer.alloc(15)) }],
      ['an empty msg', { ...good, msg: '' }],
      ['ext_kid malformed', { ...good, ext_kid: 'xyz' }],
    ]
    for (const [what, body] of cases) {
      const answer = await api(url('encrypt'), use256, body)
      t.equal(answer.status, 400, what)
      t.equal(answer.json?.error, 'bad_request', `${what}: ${answer.text}`)
    }
    const decryptCases: [string, Record<string, unknown>][] = [
      ['CBC without iv', { alg: 'AES256-CBC', kid: aes256, msg: b64(Buffer.alloc(16)) }],
      [
        'GCM iv of 12 bytes',
        { alg: 'AES256-GCM', kid: aes256, msg: b64(msg), iv: b64(Buffer.alloc(12)), tag: b64(Buffer.alloc(16)) },
      ],
      ['GCM without tag', { alg: 'AES256-GCM', kid: aes256, msg: b64(msg), iv: b64(Buffer.alloc(16)) }],
      [
        'GCM tag of 8 bytes',
        { alg: 'AES256-GCM', kid: aes256, msg: b64(msg), iv: b64(Buffer.alloc(16)), tag: b64(Buffer.alloc(8)) },
      ],
      ['CBC of 17 bytes', { alg: 'AES256-CBC', kid: aes256, msg: b64(Buffer.alloc(17)), iv: b64(Buffer.alloc(16)) }],
      ['ciphertext of 2065 bytes', { alg: 'AES256-ECB', kid: aes256, msg: b64(Buffer.alloc(2065)) }],
      ['no alg', { kid: aes256, msg: b64(Buffer.alloc(16)) }],
    ]
    for (const [what, body] of decryptCases) t.equal((await api(url('decrypt'), use256, body)).status, 400, what)
    t.equal(
      (await api(url('decrypt'), use256, { alg: 'AES256-ECB', kid: aes256, msg: b64(Buffer.alloc(2064)) })).status,
      200,
      '2064 bytes of ciphertext are accepted',
    )
    t.equal(
      (
        await api(url('encrypt'), use256, {
          ...good,
          msg: b64(Buffer.alloc(2048)),
          ctx: b64(Buffer.alloc(64)),
          aad: b64(Buffer.alloc(64)),
        })
      ).status,
      200,
      'the limits themselves pass',
    )
  })

  await t.test('the wrong key kind, a missing key and a foreign scope', async (t) => {
    const x25519 = await createKey(o.https, gen, { label: 'x', type: 'CURVE25519' })
    const useX = await login(o.base, `keymgmt:use:${x25519}`)
    const noPeer = await api(url('encrypt'), useX, { alg: 'AES256-GCM', kid: x25519, msg: b64(msg) })
    t.equal(noPeer.status, 406, 'an ECDH key without a peer')
    t.equal(noPeer.json.error, 'wrong_key_type')
    const aesPeer = await api(url('encrypt'), use256, {
      alg: 'AES256-GCM',
      kid: aes256,
      msg: b64(msg),
      pubkey: b64(hostPeer('CURVE25519').publicKey),
    })
    t.equal(aesPeer.status, 406, 'an AES key with a peer')
    const missing = '0'.repeat(32)
    const ghost = await api(url('encrypt'), await login(o.base, `keymgmt:use:${missing}`), {
      alg: 'AES256-GCM',
      kid: missing,
      msg: b64(msg),
    })
    t.equal(ghost.status, 406)
    t.equal(ghost.json.error, 'key_not_found')
    const foreign = await api(url('encrypt'), use256, { alg: 'AES256-GCM', kid: aes128, msg: b64(msg) })
    t.equal(foreign.status, 403, 'a token for another key')
    const master = await login(o.base, `keymgmt:use:${aes256}`, 'master of puppets 1986')
    t.equal(
      (await api(url('encrypt'), master, { alg: 'AES256-GCM', kid: aes256, msg: b64(msg) })).status,
      403,
      'the master is refused',
    )
    const plain = await api(`${o.base}/api/crypto/cipher/encrypt`, use256, {
      alg: 'AES256-GCM',
      kid: aes256,
      msg: b64(msg),
    })
    t.equal(plain.status, 418, 'plain HTTP')
    t.equal(
      (await api(url('encrypt'), undefined, { alg: 'AES256-GCM', kid: aes256, msg: b64(msg) })).status,
      401,
      'no token',
    )
  })

  await t.test('indirect ECDH on every curve, checked outside the device', async (t) => {
    const imp = await tokens.get('keymgmt:imp')
    for (const curve of ECDH_CURVES) {
      const kid = await createKey(o.https, gen, { label: curve, type: curve })
      const use = await login(o.base, `keymgmt:use:${kid}`)
      const get = await api(`${o.https}/api/keymgmt/get/${kid}`, use)
      t.equal(get.status, 200, `${curve}: get with the use scope`)
      const devicePublic = bytesOf(get.json.pubkey)
      const mine = hostPeer(curve)
      const ctx = Buffer.from(`context for ${curve}`)
      const enc = await api(url('encrypt'), use, {
        alg: 'AES256-GCM',
        kid,
        pubkey: b64(mine.publicKey),
        ctx: b64(ctx),
        msg: b64(msg),
      })
      t.equal(enc.status, 200, `${curve}: encrypt with pubkey`)
      const key = aesKey(mine.agree(devicePublic), ctx, 32)
      const decipher = createDecipheriv('aes-256-gcm', key, bytesOf(enc.json.iv)).setAuthTag(bytesOf(enc.json.tag))
      t.same(
        Buffer.concat([decipher.update(bytesOf(enc.json.ciphertext)), decipher.final()]),
        msg,
        `${curve}: decrypted independently`,
      )

      const iv = Buffer.alloc(16, 9)
      const cipher = createCipheriv('aes-128-cbc', aesKey(mine.agree(devicePublic), Buffer.alloc(0), 16), iv)
      const theirs = Buffer.concat([cipher.update(msg), cipher.final()])
      const imported = await api(`${o.https}/api/keymgmt/import`, imp, {
        label: `peer ${curve}`,
        type: curve,
        pubkey: b64(mine.publicKey),
      })
      t.equal(imported.status, 200, `${curve}: import the peer`)
      const dec = await api(url('decrypt'), use, {
        alg: 'AES128-CBC',
        kid,
        ext_kid: imported.json.kid,
        pubkey: b64(hostPeer(curve).publicKey),
        msg: b64(theirs),
        iv: b64(iv),
      })
      t.equal(dec.status, 200, `${curve}: decrypt with ext_kid (which wins over a pubkey)`)
      t.same(bytesOf(dec.json.plaintext), msg, `${curve}: the device decrypts what the test encrypted`)

      const other = curve === 'CURVE25519' ? 'CURVE448' : 'CURVE25519'
      const mismatch = await api(url('encrypt'), use, {
        alg: 'AES256-GCM',
        kid,
        pubkey: b64(hostPeer(other).publicKey),
        msg: b64(msg),
      })
      t.equal(mismatch.status, 406, `${curve}: a ${other} pubkey is refused`)
    }
  })

  await t.test(
    'every 200, 400 and 406 is journaled with its source and KID; 403 and 418 are not cipher records',
    async (t) => {
      const records = (await readJournal(o.device.dataDir)).records.filter(
        (r) => r.type === LogType.CRYPTO_ENCRYPT || r.type === LogType.CRYPTO_DECRYPT,
      )
      const bySource = (source: number) => records.filter((r) => r.decoded?.source === source)
      t.ok(
        bySource(200).every((r) => r.result === LogResult.OK && r.subject === 'U'),
        '200: OK',
      )
      t.ok(
        bySource(400).every((r) => r.result === LogResult.ERROR),
        '400: ERROR',
      )
      t.ok(
        bySource(406).every((r) => r.result === LogResult.FAILED),
        '406: FAILED',
      )
      t.ok(bySource(200).length >= 9 * 2 + 20, 'every success')
      t.ok(bySource(400).length >= 18, 'every malformed request')
      t.ok(bySource(406).length >= 8, 'every refusal')
      t.equal(
        records.filter((r) => ![200, 400, 406].includes(r.decoded?.source as number)).length,
        0,
        'no other sources',
      )
      t.ok(
        bySource(200).every((r) => /^[0-9a-f]{32}$/.test(String(r.decoded?.kid))),
        'the KID in every success',
      )
      t.notOk(
        records.some((r) => r.decoded?.kid === undefined),
        'a request without a readable KID is a scope failure, not a cipher record',
      )
      const text = (await readJournal(o.device.dataDir)).files
        .map((f) => Buffer.from(f.bytes).toString('utf8'))
        .join('')
      t.notOk(text.includes(b64(msg).slice(0, 20)), 'no plaintext in the journal')
    },
  )
})
