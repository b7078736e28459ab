import { createHash, createHmac } from 'node:crypto'
import { inspect } from 'node:util'
import t from 'tap'
import { BearerIssuer, INIT_TOKEN_LIFETIME, LOGIN_MAX_LIFETIME } from '../actors/auth/bearer.js'

// A counter-mode stream from a label: deterministic bytes for the secret and the token ids.
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
const SECRET = Buffer.from(seededRandom('boot 1')(32))
const part = (token: string, i: number) => token.split('.')[i]!
const json = (b64url: string) => Buffer.from(b64url, 'base64url').toString()

t.test('a minted token verifies and carries its claims in order', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('boot 1') })
  const token = issuer.mint({ scope: 'keymgmt:list', sub: 'U', exp: NOW + 600 }, NOW)
  t.equal(json(part(token, 0)), '{"typ":"JWT","alg":"HS256"}', 'header bytes exact')
  t.match(token, /^[\w-]+\.[\w-]+\.[\w-]{43}$/, 'base64url without padding')
  const claims = issuer.verify(token, NOW)
  t.same(Object.keys(JSON.parse(json(part(token, 1)))), ['scope', 'sub', 'iat', 'exp', 'jti'])
  t.same(claims, { scope: 'keymgmt:list', sub: 'U', iat: NOW, exp: NOW + 600, jti: claims?.jti })
  t.equal(Buffer.from(claims!.jti, 'base64url').length, 16)
  t.equal(
    claims!.jti,
    Buffer.from(seededRandom('boot 1')(48).subarray(32)).toString('base64url'),
    'jti from the random source',
  )
  const mac = createHmac('sha256', SECRET)
    .update(`${part(token, 0)}.${part(token, 1)}`)
    .digest('base64url')
  t.equal(part(token, 2), mac, 'HS256 with the boot secret')
  t.not(issuer.mint({ scope: 'keymgmt:list', sub: 'U', exp: NOW + 600 }, NOW), token, 'a fresh jti each time')
})

t.test('exp is the one asked for, bounded by the device', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('bounds') })
  const exp = (asked: number, now = NOW) =>
    issuer.verify(issuer.mint({ scope: 's', sub: 'M', exp: asked }, now), now)?.exp
  t.equal(exp(NOW + 60), NOW + 60)
  t.equal(exp(NOW + 10 * 86400), NOW + LOGIN_MAX_LIFETIME, 'at most 24 h')
  t.equal(exp(NOW), NOW + 1, 'never below now + 1')
  t.equal(exp(NOW - 1000), NOW + 1)
  t.equal(exp(NOW + 99.9, NOW + 0.5), NOW + 99, 'whole seconds')
  t.throws(() => issuer.mint({ scope: 's', sub: 'U', exp: Number.NaN }, NOW), RangeError)
  const init = new BearerIssuer({ random: seededRandom('init'), maxLifetime: INIT_TOKEN_LIFETIME })
  t.equal(init.verify(init.mint({ scope: 'system:config', sub: 'U', exp: NOW + 86400 }, NOW), NOW)?.exp, NOW + 8 * 3600)
})

t.test('a token is valid until its exp', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('expiry') })
  const token = issuer.mint({ scope: 's', sub: 'U', exp: NOW + 60 }, NOW)
  t.ok(issuer.verify(token, NOW + 59))
  t.equal(issuer.verify(token, NOW + 60), undefined)
  t.equal(issuer.verify(token, NOW + 3600), undefined)
})

t.test('anything but an untouched token of this boot is refused', async (t) => {
  const issuer = new BearerIssuer({ random: seededRandom('boot 1') })
  const token = issuer.mint({ scope: 'storage:disk0', sub: 'U', exp: NOW + 600 }, NOW)
  const [header, payload, mac] = token.split('.') as [string, string, string]
  const forged = Buffer.from(json(payload).replace('storage:disk0', 'storage:disk1')).toString('base64url')
  const flipped = Buffer.from(mac, 'base64url')
  flipped[0]! ^= 1
  const otherHeader = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')
  const bad: Array<[unknown, string]> = [
    [`${header}.${forged}.${mac}`, 'payload changed'],
    [`${header}.${payload}.${flipped.toString('base64url')}`, 'MAC changed'],
    [`${otherHeader}.${payload}.${mac}`, 'header bytes changed'],
    [`${header}=.${payload}.${mac}`, 'padded header'],
    [`${header}.${payload}.${mac}=`, 'padded MAC'],
    [`${header}.${payload}.${mac.slice(0, -1)}B`, 'non-canonical MAC'],
    [`${header}.${payload}.${mac.slice(0, -4)}`, 'short MAC'],
    [`${header}.${payload}`, 'two parts'],
    [`${token}.`, 'four parts'],
    [`${header}.${payload}.${mac}`.padEnd(3000, 'A'), 'too long'],
    ['', 'empty'],
    [undefined, 'not a string'],
  ]
  for (const [text, what] of bad) t.equal(issuer.verify(text, NOW), undefined, what)
  t.ok(issuer.verify(token, NOW), 'the original still verifies')

  const nextBoot = new BearerIssuer({ random: seededRandom('boot 2') })
  t.equal(nextBoot.verify(token, NOW), undefined, 'tokens die at reboot')
  t.ok(nextBoot.verify(nextBoot.mint({ scope: 'storage:disk0', sub: 'U', exp: NOW + 600 }, NOW), NOW))
})

t.test('the secret never shows', async (t) => {
  const drawn: Uint8Array[] = []
  const random = seededRandom('boot 1')
  const issuer = new BearerIssuer({
    random: (n) => {
      const b = random(n)
      drawn.push(b)
      return b
    },
  })
  t.same(drawn[0], new Uint8Array(32), 'the drawn secret buffer is wiped')
  const shown = [
    JSON.stringify(issuer),
    inspect(issuer, { showHidden: true, depth: Infinity, getters: true }),
    String(issuer),
    Object.getOwnPropertyNames(issuer).join(),
    Object.getOwnPropertySymbols(issuer).map(String).join(),
  ].join('\n')
  for (const encoding of ['hex', 'base64', 'base64url', 'latin1'] as const) {
    t.notOk(shown.includes(SECRET.toString(encoding)), encoding)
  }
  t.same(Object.keys(issuer), [])
  t.equal(JSON.stringify(issuer), '{}')
  t.throws(() => new BearerIssuer({ random: () => new Uint8Array(16) }), RangeError)
})
