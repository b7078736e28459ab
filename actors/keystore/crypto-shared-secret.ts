import { CryptoInputError } from '../../hal/index.js'
import { canAgree, type KeyRecord, keyTypes } from '../../protocol/index.js'
import { cryptoKey } from './crypto-key.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { Peer } from './crypto-request.js'
import type { KeystoreContext } from './keystore-context.js'
import { normalisePublicKey } from './public-key.js'

/**
 * The raw ECDH secret of a stored private key with its peer (crypto-contract §3, ECDH modes), in a
 * copy the caller wipes. 406: no peer, a key that cannot agree, a peer not of the key's curve.
 */
export function sharedSecret(actor: KeystoreContext, key: Readonly<KeyRecord>, peer: Peer | undefined): Uint8Array {
  const spec = keyTypes[key.type]
  if ((spec.kind !== 'ecdh' && spec.kind !== 'ec') || !canAgree(key.type, key.mode) || !key.secret)
    throw new CryptoRefusal('wrong_key_type', 'The key is not an ECDH private key')
  if (!peer) throw new CryptoRefusal('no_peer', 'An ECDH needs `ext_kid` or `pubkey`')
  const peerKey = peerPublicKey(actor, peer, key)
  try {
    return actor.engine.ecdh(spec.curve, key.secret, peerKey)
  } catch (err) {
    if (err instanceof CryptoInputError) throw new CryptoRefusal('ecdh_failed', 'The ECDH with the peer key failed')
    throw err
  }
}

/**
 * HKDF-SHA256 (empty salt) of the ECDH secret with `info` ‖ `ctx`: a key of `length` bytes the
 * caller wipes; 406 when the secret is shorter than that key (no more entropy is made than had).
 */
export function derivedSecret(
  actor: KeystoreContext,
  key: Readonly<KeyRecord>,
  peer: Peer | undefined,
  info: string,
  ctx: Uint8Array,
  length: number,
): Uint8Array {
  const shared = sharedSecret(actor, key, peer)
  try {
    if (shared.length < length) throw new CryptoRefusal('secret_too_short', 'The ECDH secret is shorter than the key')
    return actor.engine.hkdfSha256(shared, undefined, Buffer.concat([Buffer.from(info), ctx]), length)
  } finally {
    shared.fill(0)
  }
}

function peerPublicKey(actor: KeystoreContext, peer: Peer, key: Readonly<KeyRecord>): Uint8Array {
  if ('extKid' in peer) {
    const stored = cryptoKey(actor, peer.extKid, 'ext_kid')
    if (stored.type !== key.type || !stored.publicKey)
      throw new CryptoRefusal('curve_mismatch', 'The ext_kid key is not on the curve of the kid key')
    return stored.publicKey
  }
  const publicKey = normalisePublicKey(key.type, peer.publicKey)
  if (!publicKey) throw new CryptoRefusal('curve_mismatch', '`pubkey` is not a public key on the curve of the kid key')
  return publicKey
}
