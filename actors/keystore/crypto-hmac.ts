import { timingSafeEqual } from 'node:crypto'
import { type Digest, encodeBase64, keyTypes, LogType } from '../../protocol/index.js'
import { cryptoKey, sharedSecret } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { CryptoRequest, Peer } from './crypto-request.js'
import type { KeystoreContext } from './keystore-context.js'

interface HmacRequest {
  msg: Uint8Array
  alg?: Digest
  peer?: Peer
  mac?: Uint8Array
}

/**
 * `POST /api/crypto/hmac/hash` and `verify` (crypto-contract §3, §4): with an HMAC key, the
 * digest of its type (`alg` ignored); in ECDH mode, `alg` of the raw shared secret.
 */
export const hmac: { hash: CryptoOperation<HmacRequest>; verify: CryptoOperation<HmacRequest> } = {
  hash: {
    logType: LogType.CRYPTO_HMAC_HASH,
    parse: (request) => parse(request, false),
    run: (actor, request, kid) => ({ mac: encodeBase64(mac(actor, request, kid)) }),
  },
  verify: {
    logType: LogType.CRYPTO_HMAC_VERIFY,
    parse: (request) => parse(request, true),
    run(actor, request, kid) {
      const expected = mac(actor, request, kid)
      const given = request.mac!
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw new CryptoRefusal('mac_mismatch', 'The MAC does not verify')
      return undefined
    },
  },
}

function parse(request: CryptoRequest, verify: boolean): HmacRequest {
  const msg = request.msg()
  const peer = request.peer()
  // With an HMAC key (no peer) the key's type fixes the digest: `alg` is not read at all (§4).
  const alg = peer ? request.digest() : undefined
  // Any length: a MAC of another length than the digest's merely does not verify (406).
  const mac = verify ? request.required('mac') : undefined
  return { msg, ...(alg ? { alg } : {}), ...(peer ? { peer } : {}), ...(mac ? { mac } : {}) }
}

function mac(actor: KeystoreContext, request: HmacRequest, kid: string): Uint8Array {
  const key = cryptoKey(actor, kid)
  const spec = keyTypes[key.type]
  if (!request.peer) {
    if (spec.kind !== 'hmac' || !key.secret)
      throw new CryptoRefusal('wrong_key_type', 'The key is not an HMAC key (an ECDH key needs `ext_kid` or `pubkey`)')
    return actor.engine.hmac(spec.digest, key.secret, request.msg)
  }
  if (!request.alg) throw new CryptoRefusal('alg_required', 'An HMAC in ECDH mode needs `alg`')
  const shared = sharedSecret(actor, key, request.peer)
  try {
    return actor.engine.hmac(request.alg, shared, request.msg)
  } finally {
    shared.fill(0)
  }
}
