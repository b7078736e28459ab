import { encodeBase64, isKind, LogType } from '../../protocol/index.js'
import { cryptoKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { SigningFields } from './crypto-request.js'

/** `POST /api/crypto/pqc/mldsa/sign` and `verify` (crypto-contract §3, §4: FIPS 204, pure, with a context). */
export const mldsa: { sign: CryptoOperation<SigningFields>; verify: CryptoOperation<SigningFields> } = {
  sign: {
    logType: LogType.CRYPTO_MLDSA_SIGN,
    parse: (request) => request.signing(false),
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
    parse: (request) => request.signing(true),
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
