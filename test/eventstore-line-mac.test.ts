// lineMac keeps the last key's HMAC pads: it must still be HMAC-SHA256 for every key and line,
// and must notice a key whose bytes changed in place.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { lineMac } from '../eventstore/line-mac.js'

const reference = (key: Uint8Array, signed: string) =>
  createHmac('sha256', key).update(signed, 'utf8').digest().subarray(0, 16).toString('base64url')

t.test('the same MAC as node:crypto HMAC-SHA256, across keys, lengths and UTF-8', async (t) => {
  const lines = ['', '0|0|0|0|||', '1a|6553f100|82|0|U|gqNrZXk|', `ff|1|2|0|${'é'.repeat(40)}|${'A'.repeat(3000)}|`]
  // 32-byte file keys as the journal uses; a key longer than the block is hashed first (RFC 2104).
  const keys = [new Uint8Array(32).fill(7), new Uint8Array(32).fill(9), new Uint8Array(80).fill(3), new Uint8Array(0)]
  for (const key of keys)
    for (const line of lines)
      t.equal(lineMac(key, line), reference(key, line), `${key.length}-byte key, ${line.length} chars`)
})

t.test('a key changed in place gets pads of its own', async (t) => {
  const key = new Uint8Array(32).fill(1)
  t.equal(lineMac(key, 'x|'), reference(key, 'x|'))
  key.fill(2)
  t.equal(lineMac(key, 'x|'), reference(key, 'x|'), 'the new bytes, not the remembered ones')
})
