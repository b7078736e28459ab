// The ext-auth core (protocol/) against the family's known answers, byte for byte: the authenticator's
// vectors (test/vectors/ext-auth-v1.json, from encedo/encedo-authenticator tests/vectors/v1.json) and an
// authreq a real device returned (test/vectors/ext-authreq-device.json, from encedo-hem-c-api's fixture);
// X25519 and HMAC also against node:crypto.
import { createHash, createHmac, createPrivateKey, createPublicKey, diffieHellman, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import {
  EXT_JWT_APP_HEADER,
  EXT_JWT_DEVICE_HEADER,
  extAuthKid,
  extAuthSub,
  ExtAuthKeyError,
  extJwtSigned,
  ExtJwtError,
  hmacSha256,
  keyHintScope,
  nonceTime,
  openScope,
  pairingDescr,
  parseExtJwt,
  pidOfDescr,
  pidOfPidx,
  pidx,
  sealScope,
  signExtJwt,
  x25519Agree,
  x25519Clamp,
  x25519PublicKey,
} from '../protocol/index.js'

const load = (name: string) => JSON.parse(readFileSync(new URL(`vectors/${name}`, import.meta.url), 'utf8'))
const V = load('ext-auth-v1.json').vectors
const D = load('ext-authreq-device.json')
const b = (text: string) => new Uint8Array(Buffer.from(text, 'base64'))
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

t.test('X25519: clamping, public keys and shared secrets as the app computes them', async (t) => {
  const [seed, appManager, managerApp] = V.x25519
  t.equal(b64(x25519Clamp(b(seed.seed))), seed.private_clamped)
  t.equal(b64(x25519PublicKey(b(seed.seed))), seed.public, 'the public key of a seed is that of its clamped scalar')
  t.equal(b64(x25519Agree(b(appManager.private), b(appManager.peer_public))), appManager.shared)
  t.equal(b64(x25519Agree(b(managerApp.private), b(managerApp.peer_public))), managerApp.shared)
})

t.test('X25519 agrees with node:crypto and refuses small-order points and wrong lengths', async (t) => {
  const der = (prefix: string, raw: Uint8Array) => Buffer.concat([Buffer.from(prefix, 'hex'), raw])
  for (let i = 0; i < 16; i++) {
    const [a, p] = [randomBytes(32), x25519PublicKey(randomBytes(32))]
    const node = diffieHellman({
      privateKey: createPrivateKey({ key: der('302e020100300506032b656e04220420', a), format: 'der', type: 'pkcs8' }),
      publicKey: createPublicKey({ key: der('302a300506032b656e032100', p), format: 'der', type: 'spki' }),
    })
    t.equal(b64(x25519Agree(a, p)), node.toString('base64'))
  }
  t.throws(() => x25519Agree(randomBytes(32), new Uint8Array(32)), ExtAuthKeyError, 'the zero point')
  t.throws(() => x25519Agree(randomBytes(32), new Uint8Array(31)), ExtAuthKeyError)
  t.throws(() => x25519Agree(new Uint8Array(33), x25519PublicKey(randomBytes(32))), ExtAuthKeyError)
})

t.test('HMAC-SHA256 agrees with node:crypto', async (t) => {
  for (const length of [0, 1, 31, 32, 64, 65, 1000]) {
    const [key, message] = [randomBytes(32), randomBytes(length)]
    t.equal(b64(hmacSha256(key, message)), createHmac('sha256', key).update(message).digest('base64'))
  }
  t.equal(
    b64(hmacSha256(b('AA=='), 'zażółć')),
    createHmac('sha256', Buffer.from([0]))
      .update('zażółć')
      .digest('base64'),
  )
})

t.test('eJWT: the app vector, parsing, and every malformed shape refused', async (t) => {
  const [vector] = V.jwt
  const jwt = signExtJwt(vector.payload, b(vector.secret), EXT_JWT_APP_HEADER)
  t.equal(jwt, vector.jwt)
  const parsed = parseExtJwt(jwt)
  t.same(parsed.payload, vector.payload)
  t.ok(extJwtSigned(parsed, b(vector.secret)))
  t.notOk(extJwtSigned(parsed, randomBytes(32)), 'another key')
  const [h, p] = jwt.split('.')
  t.notOk(extJwtSigned(parseExtJwt(`${h}.${p}x.${jwt.split('.')[2]}`.replace('x.', '.')), randomBytes(32)))
  t.match(signExtJwt({ a: 1 }, randomBytes(32)), /^eyJlY2RoIjoieDI1NTE5IiwidHlwIjoiSldUIiwiYWxnIjoiSFMyNTYifQ\./)
  t.equal(Buffer.from(signExtJwt({}, randomBytes(32)).split('.')[0]!, 'base64url').toString(), EXT_JWT_DEVICE_HEADER)
  const mac = jwt.split('.')[2]
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const cases: [unknown, string][] = [
    [42, 'malformed'],
    ['a.b', 'malformed'],
    [`${h}.${p}.${mac}.x`, 'malformed'],
    [`${h}.${p}.AAAA`, 'malformed'],
    [`${h}.${p}!.${mac}`, 'malformed'],
    [`${part([1])}.${p}.${mac}`, 'malformed'],
    [`${h}.${part('text')}.${mac}`, 'malformed'],
    [`${h}.${Buffer.from([0xff, 0xfe]).toString('base64url')}.${mac}`, 'malformed'],
    [`${part({ alg: 'none' })}.${p}.${mac}`, 'bad_header'],
    [`${part({ alg: 'HS256', ecdh: 'p256' })}.${p}.${mac}`, 'bad_header'],
    ['x'.repeat(4097), 'malformed'],
  ]
  for (const [text, code] of cases) t.throws(() => parseExtJwt(text), { name: 'ExtJwtError', code }, String(text))
  t.ok(parseExtJwt(`${part({ typ: 'JWT', alg: 'HS256' })}.${p}.${mac}`), 'any key order, ecdh optional')
  t.type(new ExtJwtError('malformed', 'x'), Error)
})

t.test('pid <-> pidx', async (t) => {
  for (const { pid, pidx: expected } of V.pid) t.equal(pidx(pid), expected, pid)
  t.equal(pidOfPidx('a-b_c'), 'a+b/c===')
  const pid = b64(randomBytes(32))
  t.equal(pidOfPidx(pidx(pid)), pid)
})

t.test('the pairing reply and its broker MAC, from the app vector', async (t) => {
  const { inputs, derived, expected } = V.pairing
  const aidPrv = x25519Clamp(b(inputs.aid_seed))
  t.equal(b64(aidPrv), derived.aid_prv)
  t.equal(b64(x25519PublicKey(aidPrv)), derived.aid)
  const request = inputs.request_payload
  const sPair = x25519Agree(aidPrv, b(request.iss))
  const sAb = x25519Agree(aidPrv, b(request.aud))
  t.equal(b64(sPair), derived.s1)
  t.equal(b64(sAb), derived.s_epk)
  const claims = {
    jti: request.jti,
    eat: request.eat,
    iss: derived.aid,
    aud: request.iss,
    epk: request.aud,
    label: inputs.label,
  }
  const reply = signExtJwt(claims, sPair, EXT_JWT_APP_HEADER)
  t.equal(reply, expected.reply)
  t.equal(b64(hmacSha256(sAb, reply + inputs.fid)), expected.mac)
  t.ok(extJwtSigned(parseExtJwt(reply), sPair))
})

t.test('events: the app opens each scope, seals the granted one, signs and MACs the authreply', async (t) => {
  for (const { name, inputs, derived, expected } of V.events) {
    const sPair = x25519Agree(b(inputs.aid_prv), b(inputs.eid))
    const jti = b(inputs.event.jti)
    t.equal(b64(sPair), derived.s1, name)
    const opened = openScope(inputs.event.scope, sPair, jti)
    if (!expected.mac_valid) {
      t.equal(opened, undefined, `${name}: a bad tag opens nothing`)
      continue
    }
    t.equal(opened, expected.scope, name)
    const { reply } = expected
    t.equal(sealScope(reply.scope_sent, sPair, jti), reply.scope_enc, `${name}: sealed`)
    const authreply = signExtJwt(
      {
        aud: inputs.eid,
        jti: inputs.event.jti,
        exp: inputs.now + inputs.period_min * 60,
        iat: inputs.now,
        pid: inputs.pid,
        iss: inputs.aid,
        scope: reply.scope_enc,
      },
      sPair,
      EXT_JWT_APP_HEADER,
    )
    t.equal(authreply, reply.authreply, `${name}: authreply`)
    const sAb = x25519Agree(b(inputs.aid_prv), b(inputs.event.epk))
    t.equal(b64(sAb), reply.s_epk)
    t.equal(b64(hmacSha256(sAb, authreply)), reply.mac, `${name}: mac`)
  }
})

t.test('unpair and token-refresh MACs', async (t) => {
  const { unpair, token_refresh: refresh } = V
  const sAb = x25519Agree(b(unpair.inputs.aid_prv), b(unpair.inputs.epk))
  t.equal(b64(sAb), unpair.derived.s_epk)
  t.equal(b64(hmacSha256(sAb, b(unpair.inputs.nonce))), unpair.expected.mac)
  const message = Buffer.concat([b(refresh.inputs.nonce), Buffer.from(refresh.inputs.fid)])
  t.equal(b64(hmacSha256(x25519Agree(b(refresh.inputs.aid_prv), b(refresh.inputs.epk)), message)), refresh.expected.mac)
})

t.test("a real device's authreq: its MAC, its sealed scope, and the same bytes rebuilt", async (t) => {
  const eid = hex(D.EXT_FX_EID_HEX)
  const sDb = x25519Agree(hex(D.EXT_FX_REQ_EPH_PRIV_HEX), eid)
  const sPair = x25519Agree(hex(D.EXT_FX_IDENTITY_PRIV_HEX), eid)
  t.equal(Buffer.from(x25519PublicKey(hex(D.EXT_FX_IDENTITY_PRIV_HEX))).toString('hex'), D.EXT_FX_IDENTITY_PUB_HEX)
  const parsed = parseExtJwt(D.EXT_FX_AUTHREQ)
  t.ok(extJwtSigned(parsed, sDb))
  const claims = parsed.payload as { jti: string; scope: Record<string, string>; ctx: string; iss: string }
  t.equal(claims.iss, b64(eid))
  t.equal(claims.ctx, D.EXT_FX_CTX)
  const jti = b(claims.jti)
  t.equal(jti.length, 32, 'a device jti is 32 bytes')
  t.equal(nonceTime(jti), (claims as unknown as { iat: number }).iat, 'its first 4 bytes are the time it was made')
  t.equal(openScope(claims.scope[D.EXT_FX_PID_B64], sPair, jti), D.EXT_FX_SCOPE)
  const rebuilt = { ...claims, scope: { [D.EXT_FX_PID_B64]: sealScope(D.EXT_FX_SCOPE, sPair, jti) } }
  t.equal(signExtJwt(rebuilt, sDb), D.EXT_FX_AUTHREQ, 'byte for byte, in the device header order')
})

t.test('scope sealing refuses what is not a well-formed sealed value', async (t) => {
  const [sPair, jti] = [randomBytes(32), randomBytes(32)]
  const sealed = sealScope('system:config', sPair, jti)
  t.equal(sealed.length, 65, 'one block and a tag: 48 bytes')
  t.equal(openScope(sealed, sPair, jti), 'system:config')
  for (const bad of [
    42,
    '',
    'B' + sealed.slice(1),
    sealed.slice(0, -4),
    'A!!!!',
    `A${b64(randomBytes(64))}`,
    `A${b64(randomBytes(40))}`,
  ])
    t.equal(openScope(bad, sPair, jti), undefined, String(bad).slice(0, 12))
  t.equal(openScope(sealed, sPair, randomBytes(32)), undefined, 'another jti')
  t.equal(openScope(sealScope('', sPair, jti), sPair, jti), '', 'an empty scope still pads a block')
})

t.test('kids, subs, descr and key hints', async (t) => {
  const aid = b(V.pairing.derived.aid)
  const kid = extAuthKid(aid)
  t.equal(kid, createHashHex(aid).slice(0, 32))
  t.equal(extAuthSub('42afc419dbda72636b37a2455955e095'), 'Qq/EGdvacmNrN6JFWVXglQ==', "the docs' example")
  t.throws(() => extAuthSub('XYZ'))
  const pid = randomBytes(32)
  const descr = pairingDescr(pid)
  t.equal(b64(descr).slice(0, 8), 'RVhUQUlE', 'list and search show the prefix as base64')
  t.same(pidOfDescr(descr), new Uint8Array(pid))
  t.equal(pidOfDescr(descr.subarray(1)), undefined)
  t.equal(pidOfDescr(Uint8Array.from([...descr.subarray(0, 5), 0x58, ...pid])), undefined)
  t.throws(() => pairingDescr(randomBytes(31)))
  t.equal(keyHintScope('keymgmt:use:00', 0x0221, 'PGP main'), 'keymgmt:use:00#eyJ0IjoiMDIyMSIsImwiOiJQR1AgbWFpbiJ9')
  t.throws(() => keyHintScope('s', 0x10000, 'l'))
})

function createHashHex(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex')
}
