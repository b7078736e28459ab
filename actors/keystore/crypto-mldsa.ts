import { encodeBase64, isKind, LogType } from '../../protocol/index.js'
import { cryptoKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { CryptoRequest } from './crypto-request.js'

const CTX_BYTES = 255
/** Far above the longest signature (ML-DSA-87's 4627 bytes): longer is malformed, another length merely bad. */
const SIGNATURE_BYTES = 5000

interface MldsaRequest {
  msg: Uint8Array
  ctx: Uint8Array
  signature?: Uint8Array
}

/** `POST /api/crypto/pqc/mldsa/sign` and `verify` (crypto-contract §3, §4: FIPS 204, pure, with a context). */
export const mldsa: { sign: CryptoOperation<MldsaRequest>; verify: CryptoOperation<MldsaRequest> } = {
  sign: {
    logType: LogType.CRYPTO_MLDSA_SIGN,
    parse: (request) => parse(request, false),
    run(actor, request, kid) {
      const key = cryptoKey(actor, kid)
      const seed = key.secret
      if (!isKind(key.type, 'mldsa') || !seed)
        throw new CryptoRefusal('wrong_key_type', 'The key is not an ML-DSA private key')
      const variant = key.type
      const secretKey = actor.expanded.get(kid, () => actor.pqc.mlDsaKeyPair(variant, seed).secretKey)
      const sign = actor.pqc.mlDsaSign(variant, secretKey, request.msg, request.ctx, actor.random)
      return { alg: variant, sign: encodeBase64(sign) }
    },
  },
  verify: {
    logType: LogType.CRYPTO_MLDSA_VERIFY,
    parse: (request) => parse(request, true),
    run(actor, request, kid) {
      const key = cryptoKey(actor, kid)
      if (!isKind(key.type, 'mldsa') || !key.publicKey)
        throw new CryptoRefusal('wrong_key_type', 'The key is not an ML-DSA key')
      if (!actor.pqc.mlDsaVerify(key.type, key.publicKey, request.msg, request.signature!, request.ctx))
        throw new CryptoRefusal('bad_signature', 'The signature does not verify')
      return undefined
    },
  },
}

function parse(request: CryptoRequest, verify: boolean): MldsaRequest {
  const msg = request.msg()
  const ctx = request.bytes('ctx', CTX_BYTES) ?? new Uint8Array(0)
  return { msg, ctx, ...(verify ? { signature: request.required('sign', SIGNATURE_BYTES) } : {}) }
}
