import t from 'tap'
import { createHash } from 'node:crypto'
import { decodeBase64 } from '../protocol/base64.js'
import {
  KeyAttributeError,
  canAgree,
  checkDescr,
  checkLabel,
  importedKid,
  isKeyType,
  keyMode,
  keyTypes,
  listedType,
  normaliseKid,
} from '../protocol/key-types.js'

t.test('every type of the contract, and nothing else', async (t) => {
  t.same(Object.keys(keyTypes).sort(), [
    'AES128',
    'AES192',
    'AES256',
    'CURVE25519',
    'CURVE448',
    'ED25519',
    'ED448',
    'SECP256K1',
    'SECP256R1',
    'SECP384R1',
    'SECP521R1',
    'SHA2-256',
    'SHA2-384',
    'SHA2-512',
  ])
  t.ok(isKeyType('AES256'))
  for (const bad of ['aes256', 'toString', '__proto__', 'RSA2048', 5, undefined]) t.notOk(isKeyType(bad), String(bad))
})

t.test('mode: only SECP* keys, ECDH by default', async (t) => {
  t.equal(keyMode('SECP256R1', undefined), 'ECDH')
  t.equal(keyMode('SECP384R1', 'ECDH,ExDSA'), 'ECDH,ExDSA')
  t.equal(keyMode('CURVE25519', undefined), undefined)
  t.throws(() => keyMode('CURVE25519', 'ECDH'), KeyAttributeError)
  t.throws(() => keyMode('SECP256K1', 'ecdh'), KeyAttributeError)
  t.ok(canAgree('CURVE448', undefined))
  t.ok(canAgree('SECP521R1', 'ECDH,ExDSA'))
  t.notOk(canAgree('SECP256R1', 'ExDSA'))
  t.notOk(canAgree('ED25519', undefined))
  t.notOk(canAgree('AES256', undefined))
})

t.test('listed type strings', async (t) => {
  t.equal(listedType('CURVE25519', undefined, true), 'ATT,PKEY,ECDH,CURVE25519')
  t.equal(listedType('AES256', undefined, true), 'ATT,PKEY,AES256')
  t.equal(listedType('SECP256R1', 'ECDH,ExDSA', false), 'ATT,ECDH,ExDSA,SECP256R1')
  t.equal(listedType('ED25519', undefined, true), 'ATT,PKEY,ExDSA,ED25519')
})

t.test('KIDs', async (t) => {
  const pub = new Uint8Array(32).fill(9)
  t.equal(importedKid(pub), createHash('sha1').update(pub).digest('hex').slice(0, 32))
  t.match(importedKid(pub), /^[0-9a-f]{32}$/)
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
