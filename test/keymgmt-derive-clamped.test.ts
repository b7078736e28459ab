// Derive stores an X25519 or X448 target's scalar clamped (crypto-contract §4, RFC 7748 §5): the
// public key and KID are those of the clamped scalar, which the curve would have used anyway. Its
// KEY_DERIVE record names both keys: `kid` the new one, `source_kid` the one it came from.
import { x25519 } from '@noble/curves/ed25519.js'
import { x448 } from '@noble/curves/ed448.js'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { cryptoOperation } from '../actors/keystore/crypto-operation.js'
import { deriveKey } from '../actors/keystore/derive-key.js'
import { createKey } from '../actors/keystore/key-management.js'
import { LogResult, LogType } from '../protocol/journal.js'
import { publicKeyKid } from '../protocol/public-key-kid.js'
import { testKeystore } from './helpers/keystore-context.js'

const CLAMPED = {
  CURVE25519: (s: Uint8Array) => (s[0]! & 0x07) === 0 && (s[31]! & 0xc0) === 0x40,
  CURVE448: (s: Uint8Array) => (s[0]! & 0x03) === 0 && (s[55]! & 0x80) === 0x80,
}
const PEER = { CURVE25519: x25519, CURVE448: x448 }

for (const type of ['CURVE25519', 'CURVE448'] as const) {
  t.test(`${type}: every derived scalar is stored clamped, with its own public key`, async (t) => {
    const ks = await testKeystore(t)
    const made = await createKey(ks.actor, ks.req('keymgmt:gen', { label: 'source', type }))
    const source = (made.body as { kid: string }).kid
    // Unclamped, 1 in 32 (X25519) or 1 in 8 (X448) derived scalars would pass: 16 of them cannot all.
    for (let i = 0; i < 16; i++) {
      const pubkey = Buffer.from(PEER[type].getPublicKey(randomBytes(type === 'CURVE25519' ? 32 : 56))).toString(
        'base64',
      )
      const body = { kid: source, label: `derived-${i}`, type, pubkey }
      const answer = await cryptoOperation(ks.actor, ks.raw('keymgmt:derive', body), deriveKey)
      if (answer.status !== 200) {
        t.fail(`derive answered ${answer.status}`)
        return
      }
      const kid = (answer.body as { kid: string }).kid
      const stored = ks.actor.repository.get(kid)!
      if (!CLAMPED[type](stored.secret!)) {
        t.fail(`derived key ${i}: the stored scalar is not clamped`)
        return
      }
      t.same(
        stored.publicKey,
        PEER[type].getPublicKey(stored.secret!),
        `derived key ${i}: the clamped scalar's public key`,
      )
      t.equal(kid, publicKeyKid(stored.publicKey!), `derived key ${i}: its KID`)
    }
    const records = ks.journaled.filter((e) => e.type === LogType.KEY_DERIVE)
    t.equal(records.length, 16, 'one KEY_DERIVE each')
    t.match(records[0], { result: LogResult.OK, data: { source: 200, source_kid: source } }, 'naming the source')
    t.not(records[0]!.data!.kid, source, 'and `kid` the new key')
  })
}
