// The key a crypto operation uses: the stored key it names, an AES key cut from it, or the ECDH
// secret of it with a peer (the indirect modes), each in a copy the caller wipes.
import { CryptoInputError } from '../../hal/index.js'
import { canAgree, type KeyRecord, keyTypes } from '../../protocol/index.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { Peer } from './crypto-request.js'
import type { KeystoreContext } from './keystore-context.js'
import { normalisePublicKey } from './public-key.js'
import { storedKey } from './stored-key.js'

/** The stored key a crypto operation (or derive) names, or its 406: also while the key is being deleted. */
export function cryptoKey(actor: KeystoreContext, kid: string, field = 'kid'): Readonly<KeyRecord> {
  const key = storedKey(actor, kid)
  if (!key) throw new CryptoRefusal('key_not_found', `No key with this ${field}`)
  return key
}

/**
 * The leading `width` bytes of a stored AES key (a shorter algorithm uses a longer key's leading
 * bytes), in a copy the caller wipes; 406 for any other key or one narrower than `width`.
 */
export function storedAesKey(key: Readonly<KeyRecord>, width: number, alg: string): Uint8Array {
  if (keyTypes[key.type].kind !== 'aes' || !key.secret)
    throw new CryptoRefusal('wrong_key_type', 'The key is not an AES key (an ECDH key needs `ext_kid` or `pubkey`)')
  if (key.secret.length < width)
    throw new CryptoRefusal('key_too_short', `${alg} needs a key of at least ${width} bytes`)
  return key.secret.slice(0, width)
}

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
