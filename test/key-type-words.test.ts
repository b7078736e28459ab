// The one table of key types in words (webroot/views/keys/key-type-words.ts): every type the
// device can list, with every flag it can carry, reads in words; nothing raw is left in them.
import t from 'tap'
import { gotType, keyTypes, listedType, type KeyMode, type KeyType } from '../protocol/key-types.js'
import { typeName, typeWords } from '../webroot/views/keys/key-type-words.js'

const TYPES = Object.keys(keyTypes) as KeyType[]
const MODES: (KeyMode | undefined)[] = [undefined, 'ECDH', 'ExDSA', 'ECDH,ExDSA']
const RAW = /(?<![\w-])(ATT|PKEY|PQC|ExDSA|CURVE\d+|ED\d+|SECP\w+|AES\d+|SHA[23]-\d+|MLKEM\d+|MLDSA\d+)(?![\w-])/

t.test('every listed and got type, in words', async (t) => {
  const names = new Set(TYPES.map(typeName))
  t.equal(names.size, TYPES.length, 'each type a name of its own')
  for (const type of TYPES)
    for (const mode of keyTypes[type].kind === 'ec' ? MODES : [undefined])
      // Only an asymmetric key can be imported, without its private part.
      for (const hasPrivate of 'publicKey' in keyTypes[type] ? [true, false] : [true]) {
        const listed = listedType(type, mode, hasPrivate)
        const words = typeWords(listed)
        t.equal(words.type, type, `${listed}: the algorithm read`)
        t.notMatch(words.line, RAW, `${listed}: ${words.line}`)
        t.equal(words.origin, hasPrivate ? 'made in this device' : 'imported', `${listed}: where it comes from`)
      }
  for (const type of TYPES) t.notMatch(typeWords(gotType(type)).line, RAW, `get's ${gotType(type)}`)
})

t.test('the words', async (t) => {
  t.equal(typeWords('ATT,PKEY,AES256').line, 'AES-256 secret key, for encryption and key wrap, made in this device')
  t.equal(typeWords('ATT,AES256').line, 'AES-256 secret key, for encryption and key wrap, made in this device')
  t.equal(
    typeWords('ATT,PKEY,ExDSA,SECP384R1').line,
    'NIST P-384 private key, for ECDSA signatures, made in this device',
  )
  t.equal(typeWords('ECDH,CURVE25519').line, 'X25519 public key only, for key agreement (ECDH), imported')
  t.equal(typeWords('PQC,MLKEM768').line, 'ML-KEM-768 public key only, for post-quantum key encapsulation, imported')
  t.equal(typeWords('ATT,PKEY,SHA3-256').line, 'HMAC-SHA3-256 secret key, for HMAC, made in this device')
  t.equal(typeWords('ED448').line, 'Ed448, for EdDSA signatures', 'get’s bare asymmetric type: only what it says')
  t.equal(
    typeWords('ATT,PKEY,RSA4096').line,
    'an algorithm this app does not know (RSA4096), made in this device',
    'an unknown algorithm: said so, its name kept',
  )
})
