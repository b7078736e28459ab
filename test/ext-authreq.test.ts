// The device's authreq (ext-auth contract §2.4.3) as a pure function of its claims, S_db and each pairing's S_pair:
// the fixture of a real device (KajtomatO/encedo-hem-c-api tests/support/fixtures/ext_authreq_fixture.h, copied in
// test/vectors/ext-authreq-device.json with its origin) is reproduced byte for byte from its keys.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { authreqJwt } from '../actors/auth/ext-authreq.js'
import { parseExtJwt, toBase64, x25519Agree, x25519PublicKey } from '../protocol/index.js'

const D = JSON.parse(readFileSync(new URL('./vectors/ext-authreq-device.json', import.meta.url), 'utf8'))
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))

t.test("a real device's authreq, byte for byte", async (t) => {
  const eid = hex(D.EXT_FX_EID_HEX)
  const ephPrv = hex(D.EXT_FX_REQ_EPH_PRIV_HEX)
  const sDb = x25519Agree(ephPrv, eid)
  const sPair = x25519Agree(hex(D.EXT_FX_IDENTITY_PRIV_HEX), eid)
  const { payload } = parseExtJwt(D.EXT_FX_AUTHREQ)
  const fields = {
    iss: toBase64(eid),
    aud: toBase64(x25519PublicKey(ephPrv)),
    iat: payload.iat as number,
    exp: payload.exp as number,
    jti: payload.jti as string,
    ctx: D.EXT_FX_CTX as string,
  }
  const made = authreqJwt(fields, D.EXT_FX_SCOPE, [{ pid: D.EXT_FX_PID_B64, sPair }], sDb)
  t.equal(made, D.EXT_FX_AUTHREQ, 'the same authreq')
  const noted = parseExtJwt(authreqJwt({ ...fields, note: 'n' }, 's', [], sDb)).payload
  t.same(Object.keys(noted), ['iss', 'aud', 'iat', 'exp', 'jti', 'ctx', 'note', 'scope'], 'a note after ctx')
  t.same(noted.scope, {}, 'no pairing: an empty scope object')
})
