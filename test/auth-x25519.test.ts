// The auth actor's X25519 (node:crypto, raw keys) against noble's, which the clients use.
import { randomBytes } from 'node:crypto'
import { x25519 as noble } from '@noble/curves/ed25519.js'
import t from 'tap'
import { SessionKey } from '../actors/auth/session-key.js'
import { x25519, x25519PublicKey } from '../actors/auth/x25519.js'

t.test('public keys and shared secrets equal noble’s, clamping included', async (t) => {
  for (let i = 0; i < 16; i++) {
    const own = new Uint8Array(randomBytes(32))
    const peer = new Uint8Array(randomBytes(32))
    // Unclamped bits set: both clamp as RFC 7748 says.
    own[0]! |= 0x07
    own[31]! |= 0xc0
    t.same(x25519PublicKey(own), noble.getPublicKey(own))
    t.same(new Uint8Array(x25519(own, noble.getPublicKey(peer))), noble.getSharedSecret(peer, x25519PublicKey(own)))
  }
})

t.test('a point of small order or a key of another length agrees on nothing', async (t) => {
  const session = new SessionKey((n) => new Uint8Array(randomBytes(n)))
  t.equal(session.spk, Buffer.from(session.publicKey).toString('base64'))
  t.same(
    session.agree(noble.getPublicKey(new Uint8Array(32).fill(9))),
    noble.getSharedSecret(new Uint8Array(32).fill(9), session.publicKey),
  )
  t.equal(session.agree(new Uint8Array(32)), undefined, 'the zero point')
  t.equal(session.agree(Uint8Array.of(1, ...new Uint8Array(31))), undefined, 'the point u = 1')
  t.equal(session.agree(new Uint8Array(31)), undefined)
  t.throws(() => x25519PublicKey(new Uint8Array(31)), RangeError)
})
