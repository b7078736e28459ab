import { type Digest, encodeBase64, LogType } from '../../protocol/index.js'
import { cryptoKey, sharedSecret } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import type { Peer } from './crypto-request.js'

/** What an ECDH without `alg` answers of the secret, on every curve. */
const RAW_BYTES = 32

interface EcdhRequest {
  peer?: Peer
  alg?: Digest
}

/** `POST /api/crypto/ecdh` (crypto-contract §3, §4): the secret's first 32 bytes, or its `alg` digest. */
export const ecdh: CryptoOperation<EcdhRequest> = {
  logType: LogType.CRYPTO_ECDH,
  parse(request) {
    const peer = request.peer()
    const alg = request.digest()
    return { ...(peer ? { peer } : {}), ...(alg ? { alg } : {}) }
  },
  run(actor, request, kid) {
    const shared = sharedSecret(actor, cryptoKey(actor, kid), request.peer)
    try {
      const answer = request.alg ? actor.engine.digest(request.alg, shared) : shared.subarray(0, RAW_BYTES)
      return { ecdh: encodeBase64(answer) }
    } finally {
      shared.fill(0)
    }
  },
}
