import { createHash, createPublicKey, verify } from 'node:crypto'
import { inspect } from 'node:util'
import t from 'tap'
import { BearerIssuer, INIT_TOKEN_LIFETIME, LOGIN_MAX_LIFETIME } from '../actors/auth/bearer.js'
import { BearerVerifier } from '../protocol/bearer-token.js'

// A counter-mode stream from a label: deterministic bytes for the token ids.
function seededRandom(label: string) {
  let block = 0
  return (n: number) => {
    const out = Buffer.alloc(n)
    for (let off = 0; off < n; off += 32)
      out.set(
        createHash('sha256')
          .update(`${label}:${block++}`)
          .digest()
          .subarray(0, n - off),
        off,
      )
    return new Uint8Array(out)
  }
}

const NOW = 1_700_000_000
const part = (token: string, i: number) => token.split('.')[i]!
const json = (b64url: string) => Buffer.from(b64url, 'base64url').toString()
const verifierAt = (now: number) => new BearerVerifier({ now: () => now })

t.test('a minted token is an EdDSA JWT over its claims, signed with the published key', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('boot 1') })
  const token = issuer.mint({ scope: 'keymgmt:list', sub: 'U', exp: NOW + 600 }, NOW)
  t.equal(json(part(token, 0)), '{"typ":"JWT","alg":"EdDSA"}', 'header bytes exact')
  t.match(token, /^[\w-]+\.[\w-]+\.[\w-]{86}$/, 'base64url without padding, a 64-byte signature')
  t.same(Object.keys(JSON.parse(json(part(token, 1)))), ['scope', 'sub', 'iat', 'exp', 'jti'])
  const claims = verifierAt(NOW).verify(token, issuer.publicKey)
  t.same(claims, { scope: 'keymgmt:list', sub: 'U', iat: NOW, exp: NOW + 600, jti: claims?.jti })
  t.equal(claims!.jti, Buffer.from(seededRandom('boot 1')(16)).toString('base64url'), 'jti from the random source')
  t.equal(Buffer.from(issuer.publicKey, 'base64url').length, 32, 'the public key is published raw, 32 bytes')
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: issuer.publicKey }, format: 'jwk' })
  const signingInput = Buffer.from(`${part(token, 0)}.${part(token, 1)}`)
  t.ok(verify(null, signingInput, key, Buffer.from(part(token, 2), 'base64url')), 'plain Ed25519 (RFC 8037)')
  t.not(issuer.mint({ scope: 'keymgmt:list', sub: 'U', exp: NOW + 600 }, NOW), token, 'a fresh jti each time')
})

t.test('exp is the one asked for, bounded by the device', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('bounds') })
  const exp = (asked: number, now = NOW) =>
    JSON.parse(json(part(issuer.mint({ scope: 's', sub: 'M', exp: asked }, now), 1))).exp as number
  t.equal(exp(NOW + 60), NOW + 60)
  t.equal(exp(NOW + 10 * 86400), NOW + LOGIN_MAX_LIFETIME, 'at most 24 h')
  t.equal(exp(NOW), NOW + 1, 'never below now + 1')
  t.equal(exp(NOW - 1000), NOW + 1)
  t.equal(exp(NOW + 99.9, NOW + 0.5), NOW + 99, 'whole seconds')
  t.throws(() => issuer.mint({ scope: 's', sub: 'U', exp: Number.NaN }, NOW), RangeError)
  const init = new BearerIssuer({ random: seededRandom('init'), maxLifetime: INIT_TOKEN_LIFETIME })
  const initToken = init.mint({ scope: 'system:config', sub: 'U', exp: NOW + 86400 }, NOW)
  t.equal(verifierAt(NOW).verify(initToken, init.publicKey)?.exp, NOW + 8 * 3600)
})

t.test('tokens die at reboot: a new issuer has a new key', async (t) => {
  const first = new BearerIssuer({ random: seededRandom('boot 1') })
  const next = new BearerIssuer({ random: seededRandom('boot 1') })
  t.not(next.publicKey, first.publicKey, 'a key of its own, whatever the random source says')
  const token = first.mint({ scope: 'storage:disk0', sub: 'U', exp: NOW + 600 }, NOW)
  t.equal(verifierAt(NOW).verify(token, next.publicKey), undefined)
})

t.test('the signing key never shows', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('boot 1') })
  const shown = [
    JSON.stringify(issuer),
    inspect(issuer, { showHidden: true, depth: Infinity, getters: true }),
    String(issuer),
    Object.getOwnPropertyNames(issuer).join(),
    Object.getOwnPropertySymbols(issuer).map(String).join(),
  ].join('\n')
  t.notMatch(shown, /private|KeyObject/i, 'no key object is reachable')
  t.same(Object.keys(issuer), ['publicKey'])
  t.equal(JSON.stringify(issuer), JSON.stringify({ publicKey: issuer.publicKey }))
})
