import t from 'tap'
import { createHash } from 'node:crypto'
import { decodeBase64 } from '../protocol/base64.js'
import {
  KeyAttributeError,
  canAgree,
  checkDescr,
  checkLabel,
  gotType,
  isKeyType,
  keyMode,
  keyTypes,
  listedType,
  normaliseKid,
} from '../protocol/key-types.js'
import { publicKeyKid } from '../protocol/public-key-kid.js'

t.test('every type of the contract, and nothing else', async (t) => {
  t.same(Object.keys(keyTypes).sort(), [
    'AES128',
    'AES192',
    'AES256',
    'CURVE25519',
    'CURVE448',
    'ED25519',
    'ED448',
    'MLDSA44',
    'MLDSA65',
    'MLDSA87',
    'MLKEM1024',
    'MLKEM512',
    'MLKEM768',
    'SECP256K1',
    'SECP256R1',
    'SECP384R1',
    'SECP521R1',
    'SHA2-256',
    'SHA2-384',
    'SHA2-512',
    'SHA3-256',
    'SHA3-384',
    'SHA3-512',
  ])
  t.ok(isKeyType('AES256'))
  t.ok(isKeyType('MLKEM768'))
  for (const bad of ['aes256', 'toString', '__proto__', 'RSA2048', 5, undefined]) t.notOk(isKeyType(bad), String(bad))
})

t.test('mode: honoured for SECP* keys only, either flag order, no known flag = ECDH', async (t) => {
  t.equal(keyMode('SECP256R1', undefined), 'ECDH')
  t.equal(keyMode('SECP256R1', null), 'ECDH', 'JSON null is absent')
  t.equal(keyMode('SECP384R1', 'ECDH,ExDSA'), 'ECDH,ExDSA')
  t.equal(keyMode('SECP384R1', 'ExDSA,ECDH'), 'ECDH,ExDSA', 'either order')
  t.equal(keyMode('SECP521R1', 'ExDSA'), 'ExDSA')
  t.equal(keyMode('SECP256K1', 'SECP256K1'), 'ECDH', "the JS SDK's mode (the type name) counts as absent")
  t.equal(keyMode('SECP256K1', 'ecdh'), 'ECDH', 'no known flag')
  t.throws(() => keyMode('SECP256R1', 7), KeyAttributeError, 'a SECP mode that is not a string')
  for (const [type, mode] of [
    ['CURVE25519', 'ECDH'],
    ['ED25519', 'ExDSA'],
    ['AES256', 'AES256'],
    ['MLDSA65', 42],
    ['SHA3-256', null],
  ] as const)
    t.equal(keyMode(type, mode), undefined, `${type} ignores ${String(mode)}`)
  t.ok(canAgree('CURVE448', undefined))
  t.ok(canAgree('SECP521R1', 'ECDH,ExDSA'))
  t.notOk(canAgree('SECP256R1', 'ExDSA'))
  t.notOk(canAgree('ED25519', undefined))
  t.notOk(canAgree('AES256', undefined))
  t.notOk(canAgree('MLKEM512', undefined))
})

t.test('listed and get type strings', async (t) => {
  t.equal(listedType('CURVE25519', undefined, true), 'ATT,PKEY,ECDH,CURVE25519')
  t.equal(listedType('AES256', undefined, true), 'ATT,PKEY,AES256')
  t.equal(listedType('SHA3-512', undefined, true), 'ATT,PKEY,SHA3-512')
  t.equal(listedType('MLKEM768', undefined, true), 'ATT,PKEY,PQC,MLKEM768')
  t.equal(listedType('MLDSA87', undefined, false), 'PQC,MLDSA87', 'imported: neither ATT nor PKEY')
  t.equal(listedType('SECP256R1', 'ECDH,ExDSA', false), 'ECDH,ExDSA,SECP256R1')
  t.equal(listedType('ED25519', undefined, true), 'ATT,PKEY,ExDSA,ED25519')
  t.equal(gotType('ED448'), 'ED448', 'the bare algorithm of an asymmetric key')
  t.equal(gotType('MLDSA44'), 'MLDSA44')
  t.equal(gotType('AES128'), 'ATT,AES128', 'ATT and the algorithm of a symmetric one')
  t.equal(gotType('SHA2-384'), 'ATT,SHA2-384')
})

t.test('KIDs', async (t) => {
  const pub = new Uint8Array(32).fill(9)
  t.equal(publicKeyKid(pub), createHash('sha1').update(pub).digest('hex').slice(0, 32))
  t.match(publicKeyKid(pub), /^[0-9a-f]{32}$/)
  t.equal(normaliseKid('0123456789ABCDEF0123456789abcdef'), '0123456789abcdef0123456789abcdef')
  for (const bad of ['0123', `${'a'.repeat(32)} `, 'g'.repeat(32), 42])
    t.equal(normaliseKid(bad), undefined, String(bad))
})

t.test('label and descr', async (t) => {
  t.equal(checkLabel('my key'), 'my key')
  t.equal(checkLabel('x'.repeat(32)), 'x'.repeat(32))
  for (const bad of ['', 'x'.repeat(33), 'tab\there', 'Zoë', 7])
    t.throws(() => checkLabel(bad), KeyAttributeError, String(bad))
  t.same(checkDescr(Buffer.alloc(64, 1).toString('base64'), decodeBase64), new Uint8Array(64).fill(1))
  for (const bad of [Buffer.alloc(65).toString('base64'), 'not base64!', 3])
    t.throws(() => checkDescr(bad, decodeBase64), KeyAttributeError)
})
