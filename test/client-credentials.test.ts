import { createHash, createHmac, createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { x25519 } from '@noble/curves/ed25519.js'
import t from 'tap'
import { buildEjwt } from '../client/ejwt-builder.js'
import { derivePassphraseKeyAsync, passphraseChangeHmac, type PassphraseKey } from '../client/index.js'
import { b64 } from './helpers/base64.js'
import { derivePassphraseKey } from './helpers/derive-passphrase-key.js'
import { PassphraseKeyCache } from './helpers/passphrase-key-cache.js'

// The contract's test vector (device-contract.md §2.2).
const PASSPHRASE = 'example passphrase'
const EID = 'ff6/rpgprw6OjcPbedIB5LbsxjZqmnf43J1zeK1x82I='
const SEED = 'de23fa09e687fcd48910e4669fa21ca7d084e1b10be7eea4bd78ba2cb9cd14a0'
const PUB = 'pA8Bx5NNEdrwLwiYQoYNPgr7yC62kti7e1lgqFOU7Fs='
const SPK = '0kRmCliUQvRwfxi7T1ek2GtbSERzMFRGLeyO1r1tEXo='
const SHARED = 'e57bb386a8048c89c3f5e8a7e2204bc03bf32aa87def067c2017459d6258d437'

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')

function nodeX25519(seed: Uint8Array, peer?: Uint8Array) {
  const privateKey = createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), seed]),
    format: 'der',
    type: 'pkcs8',
  })
  if (!peer) return new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32))
  const publicKey = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b656e032100', 'hex'), peer]),
    format: 'der',
    type: 'spki',
  })
  return new Uint8Array(diffieHellman({ privateKey, publicKey }))
}

t.test('the contract test vector, sync and async, node:crypto and noble agree', async (t) => {
  const key = derivePassphraseKey(PASSPHRASE, EID)
  t.equal(hex(key.seed), SEED)
  t.equal(b64(key.publicKey), PUB)
  t.same(await derivePassphraseKeyAsync(PASSPHRASE, EID), key, 'async')
  t.equal(b64(nodeX25519(key.seed)), PUB, 'node:crypto public key')
  t.equal(b64(x25519.getPublicKey(key.seed)), PUB, 'noble public key')
  const spk = Buffer.from(SPK, 'base64')
  t.equal(hex(nodeX25519(key.seed, spk)), SHARED, 'node:crypto shared key')
  t.equal(hex(x25519.getSharedSecret(key.seed, spk)), SHARED, 'noble shared key')
})

t.test('the salt is the eid text as received, not its bytes', async (t) => {
  const urlSafe = EID.replaceAll('/', '_').replace(/=$/, '')
  t.not(hex((await derivePassphraseKeyAsync(PASSPHRASE, urlSafe)).seed), SEED)
})

t.test('the eJWT MAC is keyed with X25519(seed, spk)', async (t) => {
  const seed = Buffer.from(SEED, 'hex')
  const token = buildEjwt({ seed, spk: SPK, payloadJson: '{"a":"b\\/c"}' })
  const [header, payload, mac] = token.split('.') as [string, string, string]
  t.equal(Buffer.from(header, 'base64url').toString(), '{"ecdh":"x25519","alg":"HS256","typ":"JWT"}')
  t.equal(Buffer.from(payload, 'base64url').toString(), '{"a":"b\\/c"}', 'payload text kept as given')
  t.equal(mac, createHmac('sha256', Buffer.from(SHARED, 'hex')).update(`${header}.${payload}`).digest('base64url'))
  t.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'base64url without padding')
  const custom = buildEjwt({
    seed,
    spk: SPK,
    headerJson: '{"typ":"JWT","alg":"HS256","ecdh":"x25519"}',
    claims: { b: 1, a: 2 },
  })
  t.equal(Buffer.from(custom.split('.')[0]!, 'base64url').toString(), '{"typ":"JWT","alg":"HS256","ecdh":"x25519"}')
  t.equal(Buffer.from(custom.split('.')[1]!, 'base64url').toString(), '{"b":1,"a":2}')
  t.throws(() => buildEjwt({ seed, spk: SPK }), TypeError, 'claims or payloadJson needed')
  t.throws(() => buildEjwt({ seed, spk: SPK, claims: {}, payloadJson: '{}' }), TypeError, 'not both')
})

t.test('passphrase change proof', async (t) => {
  const nonce = Buffer.alloc(32, 3)
  const expected = createHmac('sha256', Buffer.from(SHARED, 'hex')).update(nonce).digest('base64')
  t.equal(passphraseChangeHmac(Buffer.from(SEED, 'hex'), SPK, nonce.toString('base64')), expected)
  t.equal(
    passphraseChangeHmac(Buffer.from(SEED, 'hex'), Buffer.from(SPK, 'base64'), nonce.toString('base64url')),
    expected,
    'raw spk, url-safe nonce',
  )
})

// A stand-in for PBKDF2 that counts its calls.
function countingDerive() {
  const calls: string[] = []
  const derive = async (passphrase: string, eid: string): Promise<PassphraseKey> => {
    calls.push(passphrase)
    const seed = new Uint8Array(createHash('sha256').update(`${passphrase}|${eid}`).digest())
    return { seed, publicKey: x25519.getPublicKey(seed) }
  }
  return { calls, derive }
}

t.test('the cache derives each (passphrase, eid) once', async (t) => {
  const { calls, derive } = countingDerive()
  const cache = new PassphraseKeyCache({ derive })
  const first = await cache.get('one', EID)
  t.same(await cache.get('one', EID), first)
  t.same(calls, ['one'], 'a hit does not recompute')
  await Promise.all([cache.get('two', EID), cache.get('two', EID)])
  t.same(calls, ['one', 'two'], 'concurrent requests share one derivation')
  await cache.get('one', 'another eid')
  t.equal(calls.length, 3, 'keyed by the eid too')
})

t.test('the cache file carries seeds across instances', async (t) => {
  const file = join(t.testdir(), 'seeds.json')
  const a = countingDerive()
  const key = await new PassphraseKeyCache({ file, derive: a.derive }).get(PASSPHRASE, EID)
  await new PassphraseKeyCache({ file, derive: a.derive }).get('other', EID)
  t.equal(a.calls.length, 2)
  const stored = readFileSync(file, 'utf8')
  t.notMatch(stored, PASSPHRASE, 'no passphrase in the file')
  t.match(stored, hex(key.seed))
  t.equal(statSync(file).mode & 0o777, 0o600)

  const b = countingDerive()
  const again = new PassphraseKeyCache({ file, derive: b.derive })
  t.same(await again.get(PASSPHRASE, EID), key)
  t.same(await again.get('other', EID), await a.derive('other', EID), 'both entries kept')
  t.same(b.calls, [], 'nothing recomputed')

  writeFileSync(file, '{ damaged')
  const c = countingDerive()
  t.same(
    await new PassphraseKeyCache({ file, derive: c.derive }).get(PASSPHRASE, EID),
    key,
    'a damaged file is an empty cache',
  )
  t.equal(c.calls.length, 1)
  t.same(
    JSON.parse(readFileSync(file, 'utf8')),
    { [Object.keys(JSON.parse(stored))[0]!]: hex(key.seed) },
    'and rewritten',
  )
  writeFileSync(file, '["not", "a", "map"]')
  t.same(await new PassphraseKeyCache({ file, derive: c.derive }).get(PASSPHRASE, EID), key)
  t.equal(c.calls.length, 2, 'a non-object file is an empty cache too')
})

t.test('a cache file that cannot be read is an error, not a silent miss', async (t) => {
  const { derive } = countingDerive()
  await t.rejects(new PassphraseKeyCache({ file: t.testdir(), derive }).get(PASSPHRASE, EID), { code: 'EISDIR' })
})

t.test('a failed derivation is not cached', async (t) => {
  let calls = 0
  const cache = new PassphraseKeyCache({
    derive: async () => {
      calls++
      throw new Error('no')
    },
  })
  await t.rejects(cache.get('x', EID))
  await t.rejects(cache.get('x', EID))
  t.equal(calls, 2)
})

t.test('the default cache derives with PBKDF2', async (t) => {
  const key = await new PassphraseKeyCache().get(PASSPHRASE, EID)
  t.equal(hex(key.seed), SEED)
})
