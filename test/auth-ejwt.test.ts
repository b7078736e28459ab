import { createHash, createHmac } from 'node:crypto'
import { x25519 } from '@noble/curves/ed25519.js'
import t, { type Test } from 'tap'
import { decodeBase64 } from '../protocol/base64.js'
import {
  EJWT_MAX_LENGTH,
  EjwtError,
  parseEjwt,
  validateInitClaims,
  validateLoginClaims,
  verifyEjwt,
  type ClaimsContext,
  type EjwtErrorCode,
} from '../actors/auth/ejwt.js'
import { buildEjwt } from '../client/ejwt-builder.js'
import { b64 } from './helpers/base64.js'

// X25519 keys from fixed labels: deterministic, and the verifier (node:crypto) meets the builder (noble).
function keyPair(label: string) {
  const secret = new Uint8Array(createHash('sha256').update(label).digest())
  return { secret, publicKey: x25519.getPublicKey(secret) }
}

const b64url = (text: string) => Buffer.from(text).toString('base64url')

const NOW = 1_700_000_000
const session = keyPair('session')
const spk = b64(session.publicKey)
const client = keyPair('client')
const iss = b64(client.publicKey)
const jti = b64(new Uint8Array(32).fill(7))
const claims = { jti, aud: spk, exp: NOW + 60, iat: NOW, iss, scope: 'keymgmt:list' }
const ctx = { spk, now: NOW }

function fails(t: Test, fn: () => unknown, code: EjwtErrorCode, what: string) {
  t.throws(fn, { name: 'EjwtError', code }, what)
}

function signed(headerPart: string, payloadPart: string, seed = client.secret): string {
  const input = `${headerPart}.${payloadPart}`
  const mac = createHmac('sha256', x25519.getSharedSecret(seed, session.publicKey)).update(input).digest('base64url')
  return `${input}.${mac}`
}

function accepted(token: string) {
  const parsed = parseEjwt(token)
  const login = validateLoginClaims(parsed.payload, ctx)
  verifyEjwt(parsed, session.secret, login.iss)
  return login
}

t.test('a builder eJWT verifies and yields its claims', async (t) => {
  const login = accepted(buildEjwt({ seed: client.secret, spk, claims }))
  t.same(login, { ...claims, iss: client.publicKey })
  t.same(accepted(buildEjwt({ seed: client.secret, spk: session.publicKey, claims })), login, 'spk given raw')
})

t.test('header and payload keys may come in any order', async (t) => {
  const orders = [
    ['ecdh', 'alg', 'typ'],
    ['ecdh', 'typ', 'alg'],
    ['alg', 'ecdh', 'typ'],
    ['alg', 'typ', 'ecdh'],
    ['typ', 'ecdh', 'alg'],
    ['typ', 'alg', 'ecdh'],
  ]
  const header: Record<string, string> = { ecdh: 'x25519', alg: 'HS256', typ: 'JWT' }
  for (const order of orders) {
    const headerJson = `{${order.map((k) => `"${k}":"${header[k]}"`).join(',')}}`
    t.ok(accepted(buildEjwt({ seed: client.secret, spk, claims, headerJson })), headerJson)
  }
  const reversed = Object.fromEntries(Object.entries(claims).reverse())
  t.ok(accepted(buildEjwt({ seed: client.secret, spk, claims: reversed })), 'payload keys reversed')
  const spaced =
    `{ "scope" : "keymgmt:list", "iss": "${iss}",\n` +
    ` "exp": ${NOW + 60}, "jti":"${jti}", "iat":${NOW}, "aud":"${spk}" }`
  t.ok(accepted(buildEjwt({ seed: client.secret, spk, payloadJson: spaced })), 'whitespace and another order')
})

t.test('the MAC covers the received bytes: \\/ escapes pass, re-serialised bytes do not', async (t) => {
  let withSlash = client
  for (let i = 0; !b64(withSlash.publicKey).includes('/'); i++) withSlash = keyPair(`slash ${i}`)
  const slashIss = b64(withSlash.publicKey)
  const payloadJson = JSON.stringify({ ...claims, iss: slashIss }).replaceAll('/', '\\/')
  t.match(payloadJson, /\\\//)
  const token = buildEjwt({ seed: withSlash.secret, spk, payloadJson })
  t.same(accepted(token).iss, withSlash.publicKey)

  const [header, payload, mac] = token.split('.') as [string, string, string]
  const reserialised = b64url(JSON.stringify(JSON.parse(Buffer.from(payload, 'base64url').toString())))
  t.not(reserialised, payload)
  const parsed = parseEjwt(`${header}.${reserialised}.${mac}`)
  t.same(parsed.payload, parseEjwt(token).payload, 'same values')
  fails(t, () => verifyEjwt(parsed, session.secret, withSlash.publicKey), 'bad_signature', 'different bytes')
})

t.test('padded base64url parts and the standard alphabet are accepted', async (t) => {
  const pad = (s: string) => s + '='.repeat((4 - (s.length % 4)) % 4)
  const token = signed(pad(b64url('{"typ":"JWT","alg":"HS256","ecdh":"x25519"}')), pad(b64url(JSON.stringify(claims))))
  t.match(token, /=\./)
  t.ok(accepted(token))
  const [h, p, m] = token.split('.') as [string, string, string]
  t.ok(accepted(`${h}.${p}.${pad(m)}`), 'padded MAC')
  const std = signed(
    Buffer.from('{"typ":"JWT","alg":"HS256","ecdh":"x25519"}').toString('base64'),
    b64url(JSON.stringify(claims)),
  )
  t.ok(accepted(std))
})

t.test('tampering, wrong keys and low-order points fail the signature', async (t) => {
  const token = buildEjwt({ seed: client.secret, spk, claims })
  const [header, payload, mac] = token.split('.') as [string, string, string]
  const check =
    (text: string, key = client.publicKey, priv = session.secret) =>
    () =>
      verifyEjwt(parseEjwt(text), priv, key)
  const otherHeader = b64url('{"alg":"HS256","ecdh":"x25519","typ":"JWT"}')
  fails(t, check(`${otherHeader}.${payload}.${mac}`), 'bad_signature', 'header bytes changed')
  const tamperedPayload = b64url(JSON.stringify({ ...claims, scope: 'keymgmt:gen' }))
  fails(t, check(`${header}.${tamperedPayload}.${mac}`), 'bad_signature', 'payload changed')
  const macBytes = Buffer.from(mac, 'base64url')
  macBytes[5]! ^= 1
  fails(t, check(`${header}.${payload}.${macBytes.toString('base64url')}`), 'bad_signature', 'MAC changed')
  fails(t, check(token, keyPair('someone else').publicKey), 'bad_signature', 'another claimed key')
  fails(t, check(token, client.publicKey, keyPair('last boot').secret), 'bad_signature', 'another session key')
  fails(
    t,
    check(buildEjwt({ seed: keyPair('attacker').secret, spk, claims })),
    'bad_signature',
    'signed by another key',
  )
  fails(t, check(token, new Uint8Array(32)), 'bad_signature', 'the zero point')
  fails(t, check(token, new Uint8Array(32).fill(0).fill(1, 0, 1)), 'bad_signature', 'the point of order 4')
  t.throws(check(token, new Uint8Array(31)), RangeError, 'a short key is a caller bug')
})

t.test('structure: three base64url parts of JSON objects, bounded length', async (t) => {
  const token = buildEjwt({ seed: client.secret, spk, claims })
  const [header, payload, mac] = token.split('.') as [string, string, string]
  const malformed: Array<[unknown, string]> = [
    ['', 'empty'],
    [`${header}.${payload}`, 'two parts'],
    [`${header}.${payload}.${mac}.`, 'four parts'],
    [`${header}.${payload}.${mac}.${mac}`, 'four parts'],
    [`${header}.${payload}.${mac.slice(0, -2)}`, 'a truncated MAC'],
    [`${header}.${payload}.`, 'no MAC'],
    [`${header}.${payload}!.${mac}`, 'a stray character'],
    [`${header}.${payload.slice(0, -1)}.${mac}`, 'a cut payload'],
    [`${header}.${payload} .${mac}`, 'a space'],
    [`${header}.${payload}.${mac.slice(0, -1)}B`, 'non-zero trailing bits'],
    [`${header}.${payload}.=${mac}`, 'misplaced padding'],
    [`${header}.${b64url('[1,2]')}.${mac}`, 'an array payload'],
    [`${header}.${b64url('null')}.${mac}`, 'a null payload'],
    [`${header}.${b64url('"text"')}.${mac}`, 'a string payload'],
    [`${header}.${b64url('{"a":1')}.${mac}`, 'invalid JSON'],
    [`${header}.${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}.${mac}`, 'invalid UTF-8'],
    [`${b64url('7')}.${payload}.${mac}`, 'a number header'],
    [42, 'not a string'],
    [undefined, 'nothing'],
    [`${header}.${payload}.${mac}`.padEnd(EJWT_MAX_LENGTH + 1, 'A'), 'too long'],
  ]
  for (const [text, what] of malformed) {
    fails(t, () => parseEjwt(text), 'malformed', what)
  }
  // Three parts, so that only the length check can refuse it before the parts are decoded.
  const huge = `${header}.${payload}.${mac}`.padEnd(10_000_000, 'A')
  t.throws(
    () => parseEjwt(huge),
    { name: 'EjwtError', code: 'malformed', message: `the eJWT is longer than ${EJWT_MAX_LENGTH} characters` },
    'huge: refused by its length, before decoding',
  )
})

t.test('the header must be exactly ecdh x25519, HS256, JWT', async (t) => {
  const bad = [
    '{"ecdh":"x25519","alg":"none","typ":"JWT"}',
    '{"ecdh":"x25519","alg":"HS256","typ":"jwt"}',
    '{"ecdh":"X25519","alg":"HS256","typ":"JWT"}',
    '{"ecdh":"x25519","alg":"HS256"}',
    '{"ecdh":"x25519","alg":"HS256","typ":"JWT","kid":"1"}',
    '{"alg":"HS256","typ":"JWT","toString":"x"}',
    '{"ecdh":"x25519","alg":"HS256","typ":["JWT"]}',
    '{}',
  ]
  for (const headerJson of bad) {
    fails(t, () => parseEjwt(buildEjwt({ seed: client.secret, spk, claims, headerJson })), 'bad_header', headerJson)
  }
})

t.test('login claims', async (t) => {
  const login =
    (changes: Record<string, unknown>, c: ClaimsContext = ctx) =>
    () =>
      validateLoginClaims({ ...claims, ...changes }, c)
  t.ok(login({ iat: NOW - 3 })(), 'iat a few seconds in the past')
  t.ok(login({ iat: NOW - 60 })(), 'iat a minute in the past')
  t.ok(login({ iat: NOW + 5 })(), 'iat a little ahead')
  t.ok(login({ iat: NOW - 30.5, exp: NOW + 59.5 })(), 'fractional times')
  t.ok(login({ exp: NOW + 60 }, { spk, now: NOW + 60 })(), 'exp equal to the challenge exp')
  t.ok(login({ exp: NOW + 3600 })(), 'a longer token asked for')
  t.ok(login({ iss: Buffer.from(client.publicKey).toString('base64url') })(), 'iss url-safe without padding')
  t.ok(login({ iat: NOW - 120 }, { spk, now: NOW, iatPast: 300 })(), 'a wider window on request')
  for (const scope of ['system:shutdown', 'storage:disk1:rw', 'keymgmt:use:00112233445566778899AABBCCDDEEFF'])
    t.ok(login({ scope })(), `scope ${scope}`)
  // The family mints a token for any scope of its form (its certification logs in with `system:wrong`):
  // one that names nothing opens nothing, which the access rules decide, not the login.
  const everyPrintable = String.fromCharCode(...Array.from({ length: 94 }, (_, i) => 0x21 + i))
  for (const scope of [
    'system:wrong',
    'system:reboot',
    'system:config:x',
    'storage',
    'storage:disk01',
    'keymgmt:use:00',
    'x',
    everyPrintable,
    everyPrintable.repeat(3).slice(0, 255),
  ])
    t.equal(login({ scope })().scope, scope, `any scope of the form, as asked: ${scope.slice(0, 40)}`)

  fails(t, login({ exp: NOW - 1 }), 'expired', 'expired')
  fails(t, login({}, { spk, now: NOW + 61 }), 'expired', 'a minute after the challenge')
  fails(t, login({ iat: NOW - 61 }), 'bad_time', 'iat too old')
  fails(t, login({ iat: NOW + 6 }), 'bad_time', 'iat in the future')
  fails(t, login({ aud: b64(keyPair('other').publicKey) }), 'wrong_audience', 'another session')
  fails(t, login({ aud: spk.replace(/=$/, '') }), 'wrong_audience', 'aud is compared as sent')

  const badClaims: Array<[Record<string, unknown>, string]> = [
    [{ scope: undefined }, 'no scope'],
    [{ scope: '' }, 'empty scope'],
    [{ scope: ['system:config'] }, 'scope array'],
    [{ scope: 'x'.repeat(256) }, 'a scope of 256 characters'],
    [{ scope: ' ' }, 'a space'],
    [{ scope: 'system: config' }, 'a scope with a space'],
    [{ scope: 'system:config\t' }, 'a tab'],
    [{ scope: 'system:config\n' }, 'a newline'],
    [{ scope: '\u0000' }, 'a NUL'],
    [{ scope: 'system:config\u007f' }, 'a DEL'],
    [{ scope: 'système' }, 'a letter beyond ASCII'],
    [{ scope: 'system:\u00a0config' }, 'a no-break space'],
    [{ scope: 'scope:😀' }, 'an emoji'],
    [{ jti: undefined }, 'no jti'],
    [{ jti: b64(new Uint8Array(16)) }, 'short jti'],
    [{ jti: 'not base64!' }, 'jti not base64'],
    [{ aud: 5 }, 'aud number'],
    [{ exp: String(NOW + 60) }, 'exp string'],
    [{ exp: null }, 'exp null'],
    [{ iat: undefined }, 'no iat'],
    [{ iss: b64(new Uint8Array(31)) }, 'iss 31 bytes'],
    [{ iss: 42 }, 'iss number'],
    [{ iss: `${iss}x` }, 'iss not base64'],
  ]
  for (const [changes, what] of badClaims) fails(t, login(changes), 'bad_claims', what)
  fails(t, login({ scope: undefined, aud: 'x', exp: 0 }), 'bad_claims', 'shape is checked before values')
  fails(t, login({ scope: 'a b', exp: 0 }), 'bad_claims', "the scope's form is its shape: checked before values")
})

t.test('personalisation claims carry cfg instead of scope', async (t) => {
  const { scope: _, ...base } = claims
  const cfg = { user: 'alice', hostname: 'hem.local' }
  const init = validateInitClaims({ ...base, cfg }, ctx)
  t.same(init, { ...base, iss: client.publicKey, cfg })
  fails(t, () => validateInitClaims(base, ctx), 'bad_claims', 'no cfg')
  fails(t, () => validateInitClaims({ ...base, cfg: [cfg] }, ctx), 'bad_claims', 'cfg array')
  fails(t, () => validateInitClaims({ ...base, cfg: null }, ctx), 'bad_claims', 'cfg null')
  fails(t, () => validateInitClaims({ ...base, cfg, exp: NOW - 1 }, ctx), 'expired', 'expired')
  const token = buildEjwt({ seed: client.secret, spk, claims: { ...base, cfg } })
  const parsed = parseEjwt(token)
  verifyEjwt(parsed, session.secret, validateInitClaims(parsed.payload, ctx).iss)
})

t.test('error codes map to 400 or 401', async (t) => {
  const status = (code: EjwtErrorCode) => new EjwtError(code, code).status
  for (const code of ['malformed', 'bad_header', 'bad_claims'] as const) t.equal(status(code), 400, code)
  for (const code of [
    'bad_signature',
    'expired',
    'bad_time',
    'wrong_audience',
    'unknown_jti',
    'unknown_key',
  ] as const) {
    t.equal(status(code), 401, code)
  }
  const err = new EjwtError('expired', 'gone')
  t.ok(err instanceof Error)
  t.equal(err.name, 'EjwtError')
  t.equal(err.message, 'gone')
})

t.test('strict base64 decoding', async (t) => {
  t.same(decodeBase64('AAEC'), new Uint8Array([0, 1, 2]))
  t.same(decodeBase64('-_8'), new Uint8Array([0xfb, 0xff]))
  t.same(decodeBase64('+/8='), new Uint8Array([0xfb, 0xff]))
  t.same(decodeBase64('AA=='), new Uint8Array([0]))
  t.same(decodeBase64('AA'), new Uint8Array([0]))
  t.same(decodeBase64(''), new Uint8Array(0))
  for (const bad of ['A', 'AA=', 'AAA==', 'AB==', 'AAE=x', 'A A=', 'AA===', '=AAA', 'AA\n', 'AAAAA']) {
    t.equal(decodeBase64(bad), undefined, JSON.stringify(bad))
  }
})
