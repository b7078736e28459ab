// The bearer token verifier every service uses (protocol/bearer-token.ts): strict parsing, the
// Ed25519 signature with the published key, expiry by an injected clock, and its cache.
import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto'
import t from 'tap'
import { BEARER_HEADER, BearerVerifier, type SignatureCheck } from '../protocol/bearer-token.js'

const NOW = 1_700_000_000

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privateKey, publicKey: publicKey.export({ format: 'jwk' }).x! }
}

const b64 = (text: string) => Buffer.from(text).toString('base64url')

/** A token over exactly these header and payload texts. */
function signed(privateKey: KeyObject, payload: string, header = BEARER_HEADER): string {
  const input = `${header}.${b64(payload)}`
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`
}

function claims(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ scope: 'keymgmt:list', sub: 'U', iat: NOW, exp: NOW + 600, jti: 'j', ...extra })
}

/** A verifier whose clock the test sets and whose signature checks it counts. */
function counted(maxEntries?: number) {
  const state = { now: NOW, checks: 0 }
  const check: SignatureCheck = (data, signature, key) => {
    state.checks += 1
    return verify(null, data, key, signature)
  }
  const verifier = new BearerVerifier({ now: () => state.now, check, ...(maxEntries ? { maxEntries } : {}) })
  return { state, verifier }
}

const device = keyPair()
const stranger = keyPair()

t.test('a good token gives its claims', async (t) => {
  const { verifier } = counted()
  t.same(verifier.verify(signed(device.privateKey, claims()), device.publicKey), {
    scope: 'keymgmt:list',
    sub: 'U',
    iat: NOW,
    exp: NOW + 600,
    jti: 'j',
  })
})

t.test('a bad signature, or one by another key, is refused', async (t) => {
  const { verifier } = counted()
  const token = signed(device.privateKey, claims())
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const flipped = Buffer.from(signature, 'base64url')
  flipped[10]! ^= 1
  t.equal(verifier.verify(`${header}.${payload}.${flipped.toString('base64url')}`, device.publicKey), undefined)
  const widened = b64(claims({ scope: 'keymgmt:use:00' }))
  t.equal(verifier.verify(`${header}.${widened}.${signature}`, device.publicKey), undefined, 'payload changed')
  t.equal(verifier.verify(signed(stranger.privateKey, claims()), device.publicKey), undefined, 'another key')
  t.equal(verifier.verify(token, 'not a key'), undefined, 'a published key that is no key verifies nothing')
  t.ok(verifier.verify(token, device.publicKey), 'the untouched token still verifies')
})

t.test('only the exact header', async (t) => {
  const { verifier } = counted()
  for (const header of [
    '{"alg":"EdDSA","typ":"JWT"}',
    '{"typ":"JWT","alg":"HS256"}',
    '{"typ":"JWT","alg":"none"}',
    '{"typ":"JWT","alg":"EdDSA","kid":"1"}',
  ]) {
    t.equal(verifier.verify(signed(device.privateKey, claims(), b64(header)), device.publicKey), undefined, header)
  }
})

t.test('only canonical, unpadded base64url, within the length bound', async (t) => {
  const { verifier } = counted()
  const token = signed(device.privateKey, claims())
  const [header, payload, signature] = token.split('.') as [string, string, string]
  // 64 bytes take 86 characters, whose last carries 4 unused bits: changing them is not canonical.
  const last = signature.at(-1)!
  const twin = String.fromCharCode(last.charCodeAt(0) ^ 1)
  const bad: Array<[string, string]> = [
    [`${header}.${payload}.${signature.slice(0, -1)}${twin}`, 'non-canonical signature'],
    [`${header}.${payload}.${signature}==`, 'padded signature'],
    [`${header}.${payload}=.${signature}`, 'padded payload'],
    [`${header}.${payload.replace(/-/g, '+').replace(/_/g, '/')}x.${signature}`, 'not base64url'],
    [`${header}.${payload}.${signature.slice(0, -4)}`, 'short signature'],
    [`${header}.${payload}`, 'two parts'],
    [`${token}.`, 'four parts'],
    [`${header}.${payload}.${signature}`.padEnd(3000, 'A'), 'too long'],
    ['', 'empty'],
  ]
  for (const [text, what] of bad) t.equal(verifier.verify(text, device.publicKey), undefined, what)
  t.equal(verifier.verify(undefined as unknown as string, device.publicKey), undefined, 'not a string')
})

t.test('a signed payload must still have the claims, with their types', async (t) => {
  const { verifier } = counted()
  for (const payload of [
    claims({ exp: undefined }),
    claims({ exp: '1800000000' }),
    claims({ sub: 1 }),
    claims({ scope: null }),
    '[]',
    'not json',
  ]) {
    t.equal(verifier.verify(signed(device.privateKey, payload), device.publicKey), undefined, payload)
  }
})

t.test('expiry by the injected clock, from the cache too', async (t) => {
  const { state, verifier } = counted()
  const token = signed(device.privateKey, claims({ exp: NOW + 60 }))
  state.now = NOW + 59
  t.ok(verifier.verify(token, device.publicKey), 'valid a second before exp')
  state.now = NOW + 60
  t.equal(verifier.verify(token, device.publicKey), undefined, 'not at exp, although it was cached')
  const uncached = counted()
  uncached.state.now = NOW + 3600
  t.equal(uncached.verifier.verify(token, device.publicKey), undefined, 'nor uncached, long after')
  uncached.verifier.verify(token, device.publicKey)
  t.equal(uncached.state.checks, 2, 'an expired token is not cached')
})

t.test('a cached token costs no second signature check', async (t) => {
  const { state, verifier } = counted()
  const token = signed(device.privateKey, claims())
  verifier.verify(token, device.publicKey)
  verifier.verify(token, device.publicKey)
  verifier.verify(token, device.publicKey)
  t.equal(state.checks, 1)
  verifier.verify(signed(stranger.privateKey, claims()), device.publicKey)
  verifier.verify(signed(stranger.privateKey, claims()), device.publicKey)
  t.equal(state.checks, 3, 'a refusal is not cached: it is checked each time')
})

t.test('a new published key empties the cache', async (t) => {
  const { state, verifier } = counted()
  const token = signed(device.privateKey, claims())
  t.ok(verifier.verify(token, device.publicKey))
  t.equal(verifier.verify(token, stranger.publicKey), undefined, 'not served from the cache under another key')
  t.ok(verifier.verify(token, device.publicKey), 'under its own key again it verifies')
  t.equal(state.checks, 3, 'each time with a signature check: the cache was emptied at each change')
})

t.test('the cache stays bounded, evicting the oldest', async (t) => {
  const { state, verifier } = counted(2)
  const tokens = ['a', 'b', 'c'].map((jti) => signed(device.privateKey, claims({ jti })))
  for (const token of tokens) verifier.verify(token, device.publicKey)
  t.equal(state.checks, 3)
  verifier.verify(tokens[2]!, device.publicKey)
  t.equal(state.checks, 3, 'the newest is cached')
  verifier.verify(tokens[0]!, device.publicKey)
  t.equal(state.checks, 4, 'the oldest was dropped')
})
