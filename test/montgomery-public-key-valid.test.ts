// The rule the key store applies to an imported X25519 or X448 public key (issue 35 item 6): a
// point of small order is refused, as an Ed25519 one is. Checked against the known list of their
// encodings and against OpenSSL, whose X25519/X448 refuses exactly the peers that give an all-zero
// secret.
import { createPublicKey, diffieHellman, generateKeyPairSync, randomBytes } from 'node:crypto'
import t from 'tap'
import { montgomeryPublicKeyValid } from '../hal/crypto/montgomery-public-key-valid.js'
import { NOT_SMALL_ORDER, SMALL_ORDER } from './helpers/small-order-points.js'

const CURVES = { CURVE25519: { jwk: 'X25519', size: 32 }, CURVE448: { jwk: 'X448', size: 56 } } as const

/** Whether OpenSSL agrees on a secret with `u` as the peer (it refuses an all-zero one). */
function opensslAgrees(curve: keyof typeof CURVES, u: Uint8Array): boolean {
  const { jwk } = CURVES[curve]
  const { privateKey } = jwk === 'X25519' ? generateKeyPairSync('x25519') : generateKeyPairSync('x448')
  const x = Buffer.from(u).toString('base64url')
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: jwk, x }, format: 'jwk' })
  try {
    diffieHellman({ privateKey, publicKey })
    return true
  } catch {
    return false
  }
}

for (const curve of ['CURVE25519', 'CURVE448'] as const) {
  t.test(`${curve}: every encoding of a point of small order is refused, and nothing else`, async (t) => {
    for (const [what, u] of SMALL_ORDER[curve]) {
      t.notOk(opensslAgrees(curve, u), `${what}: OpenSSL gets the all-zero secret (the list is right)`)
      t.notOk(montgomeryPublicKeyValid(curve, u), `${what}: refused`)
    }
    for (const [what, u] of NOT_SMALL_ORDER[curve]) {
      t.ok(opensslAgrees(curve, u), `${what}: OpenSSL agrees on a secret`)
      t.ok(montgomeryPublicKeyValid(curve, u), `${what}: a valid public key`)
    }
    const { size } = CURVES[curve]
    for (let i = 0; i < 32; i++) {
      const u = new Uint8Array(randomBytes(size))
      t.equal(montgomeryPublicKeyValid(curve, u), opensslAgrees(curve, u), `random u ${i}: as OpenSSL`)
    }
    for (const length of [0, size - 1, size + 1])
      t.notOk(montgomeryPublicKeyValid(curve, new Uint8Array(length).fill(9)))
  })
}
