// The one table of key types and curves (protocol/key-types.ts naming hal/crypto/curves.ts): every
// entry complete, and every place that derives from it agreeing: both engines, OpenSSL's and
// noble's names, the known-answer vectors, the app's PEM and hemctl's help.
import { createPublicKey } from 'node:crypto'
import t from 'tap'
import { CURVES, ED_ALGORITHMS, edCurveOf, type CurveName } from '../hal/crypto/curves.js'
import { nativeEngine, nobleEngine } from '../hal/crypto/index.js'
import { NOBLE_EDDSA, NOBLE_EDWARDS, NOBLE_MONTGOMERY, NOBLE_SEC } from '../hal/crypto/noble-curves.js'
import { EDDSA_VECTORS } from '../hal/crypto/signature-vectors.js'
import { DH_VECTORS } from '../hal/crypto/vectors.js'
import { keyTypes, type KeyType } from '../protocol/key-types.js'
import { isPublicKeyType, publicKeyPem, readPublicKey } from '../webroot/views/keys/public-key-pem.js'
import { defaultScheme, ECDH_KEYS, SIGNING_KEYS, TYPE_USAGE } from '../cli/hemctl/key-type-help.js'
import { seededRandom } from './helpers/engine-properties.js'

const FAMILY = { ecdh: 'montgomery', eddsa: 'edwards', ec: 'weierstrass' } as const
const ENGINES = [nativeEngine, nobleEngine]
const TYPES = Object.keys(keyTypes) as KeyType[]
const curveTypes = TYPES.flatMap((type) => {
  const info = keyTypes[type]
  return 'curve' in info ? [{ type, info, curve: CURVES[info.curve] }] : []
})

t.test('every curve of the table is named by a key type of its family, with its sizes', async (t) => {
  t.same(new Set(curveTypes.map(({ info }) => info.curve)), new Set(Object.keys(CURVES)), 'no curve without a type')
  for (const { type, info, curve } of curveTypes) {
    t.equal(curve.kind, FAMILY[info.kind as keyof typeof FAMILY], `${type}: family`)
    t.equal(info.publicKey, curve.kind === 'weierstrass' ? 1 + curve.size : curve.size, `${type}: public key size`)
    t.equal(info.derived, curve.size, `${type}: derived size`)
    t.ok(curve.oids.length > 0 && curve.jwk && curve.noble, `${type}: OIDs, JWK and noble names`)
  }
})

t.test('both engines, on OpenSSL and on noble, know each ECDH curve and agree on its keys', async (t) => {
  for (const { type, info, curve } of curveTypes) {
    if (curve.kind === 'edwards') continue
    const pairs = ENGINES.map((engine) => engine.generateKeyPair(info.curve as never, seededRandom(Uint8Array.of(7))))
    t.equal(pairs[0]!.publicKey.length, info.publicKey, `${type}: public key length`)
    t.same(pairs[0], pairs[1], `${type}: native and noble make the same key pair`)
    const peer = nobleEngine.generateKeyPair(info.curve as never, seededRandom(Uint8Array.of(8))).publicKey
    const secrets = ENGINES.map((engine) => engine.ecdh(info.curve as never, pairs[0]!.privateKey, peer))
    t.same(secrets[0], secrets[1], `${type}: the same secret`)
    t.equal(secrets[0]!.length, curve.size, `${type}: a secret of the curve's size`)
    const nobleObject =
      curve.kind === 'montgomery' ? NOBLE_MONTGOMERY[info.curve as never] : NOBLE_SEC[info.curve as never]
    t.ok(nobleObject, `${type}: noble's object found by name`)
    t.ok(
      DH_VECTORS.some((vector) => vector.curve === info.curve),
      `${type}: a known-answer vector`,
    )
  }
})

t.test('each SEC curve signs on one engine and verifies on the other with its digest', async (t) => {
  const message = new TextEncoder().encode('table')
  for (const { type, info, curve } of curveTypes) {
    if (curve.kind !== 'weierstrass') continue
    const sec = info.curve as keyof typeof NOBLE_SEC
    const { privateKey, publicKey } = nobleEngine.generateKeyPair(sec, seededRandom(Uint8Array.of(9)))
    const signature = nativeEngine.ecdsaSign(sec, privateKey, curve.digest, message)
    t.ok(nobleEngine.ecdsaVerify(sec, publicKey, curve.digest, message, signature), `${type}: native → noble`)
    const back = nobleEngine.ecdsaSign(sec, privateKey, curve.digest, message)
    t.ok(nativeEngine.ecdsaVerify(sec, publicKey, curve.digest, message, back), `${type}: noble → native`)
  }
})

t.test('each EdDSA variant resolves, signs alike on both engines and has an RFC 8032 vector', async (t) => {
  const message = new TextEncoder().encode('table')
  const context = new TextEncoder().encode('ctx')
  for (const algorithm of ED_ALGORITHMS) {
    const edCurve = edCurveOf(algorithm)
    const seed = new Uint8Array(CURVES[edCurve].size).fill(3)
    t.ok(NOBLE_EDDSA[algorithm] && NOBLE_EDWARDS[edCurve], `${algorithm}: noble's objects found by name`)
    const publicKeys = ENGINES.map((engine) => engine.eddsaPublicKey(edCurve, seed))
    t.same(publicKeys[0], publicKeys[1], `${algorithm}: the same public key`)
    const signatures = ENGINES.map((engine) => engine.eddsaSign(algorithm, seed, message, context))
    t.same(signatures[0], signatures[1], `${algorithm}: the same signature`)
    t.equal(signatures[0]!.length, CURVES[edCurve].signature, `${algorithm}: signature length`)
    for (const engine of ENGINES)
      t.ok(engine.eddsaVerify(algorithm, publicKeys[0]!, message, signatures[0]!, context), `${algorithm} verifies`)
    t.ok(
      EDDSA_VECTORS.some((vector) => vector.algorithm === algorithm),
      `${algorithm}: a known-answer vector`,
    )
  }
})

t.test("the app's PEM carries each curve's OIDs, as OpenSSL reads them, and reads back", async (t) => {
  for (const { type, info, curve } of curveTypes) {
    if (!isPublicKeyType(type)) {
      t.fail(`${type} has no PEM`)
      continue
    }
    const raw =
      curve.kind === 'edwards'
        ? nobleEngine.eddsaPublicKey(info.curve as never, new Uint8Array(curve.size).fill(5))
        : nobleEngine.generateKeyPair(info.curve as never, seededRandom(Uint8Array.of(5))).publicKey
    const pem = publicKeyPem(type, raw)
    t.same(readPublicKey(pem), { type, bytes: raw }, `${type}: read back`)
    const jwk = createPublicKey(pem).export({ format: 'jwk' })
    t.equal(jwk.crv, curve.jwk, `${type}: OpenSSL reads the curve the table names`)
  }
})

t.test("hemctl's help names every type, and every signing type has a default scheme", async (t) => {
  for (const type of TYPES) t.match(TYPE_USAGE, new RegExp(`\\b${type}\\b`), `--type lists ${type}`)
  for (const { type, info, curve } of curveTypes) {
    if (info.kind === 'ecdh') t.match(ECDH_KEYS, new RegExp(`\\b${type}\\b`), `ECDH help names ${type}`)
    if (info.kind === 'eddsa') t.match(SIGNING_KEYS, new RegExp(`\\b${type}\\b`), `sign help names ${type}`)
    const scheme = defaultScheme(type)
    if (curve.kind === 'montgomery') t.equal(scheme, undefined, `${type} does not sign`)
    else if (curve.kind === 'edwards') t.equal(scheme && edCurveOf(scheme as never), info.curve, `${type}: EdDSA`)
    else t.match(scheme, new RegExp(`^SHA${curve.digest.slice(5)}WithECDSA$`), `${type}: the curve's digest`)
  }
  for (const type of TYPES.filter((type) => keyTypes[type].kind === 'mldsa')) t.equal(defaultScheme(type), 'MLDSA')
})

const curveNames: CurveName[] = Object.keys(CURVES) as CurveName[]
t.test('the table has no curve twice under another name', async (t) => {
  for (const field of ['jwk', 'noble'] as const) {
    const values = curveNames.map((name) => CURVES[name][field])
    t.equal(new Set(values).size, values.length, `${field} names are unique`)
  }
  const oids = curveNames.map((name) => CURVES[name].oids.join())
  t.equal(new Set(oids).size, oids.length, 'OIDs are unique')
})
