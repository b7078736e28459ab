import type { MlKemVariant } from '../../hal/index.js'
import { encodeBase64, isKind, type KeyRecord, keyTypes, LogType } from '../../protocol/index.js'
import { cryptoKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { KeystoreContext } from './keystore-context.js'

/** `POST /api/crypto/pqc/mlkem/encaps` and `decaps` (crypto-contract §3, §4: FIPS 203). */
export const mlkem: {
  encaps: CryptoOperation<Record<string, never>>
  decaps: CryptoOperation<{ ct: Uint8Array }>
} = {
  encaps: {
    logType: LogType.CRYPTO_MLKEM_ENCAPS,
    parse: () => ({}),
    run(actor, _request, kid) {
      // An imported encapsulation key serves as well as a stored pair's.
      const { key, variant } = mlKemKey(actor, kid)
      const { cipherText, sharedSecret } = actor.pqc.mlKemEncapsulate(variant, key.publicKey!, actor.random)
      try {
        return { alg: variant, ss: encodeBase64(sharedSecret), ct: encodeBase64(cipherText) }
      } finally {
        sharedSecret.fill(0)
      }
    },
  },
  decaps: {
    logType: LogType.CRYPTO_MLKEM_DECAPS,
    // Any length: one that is not the variant's is the operation's 406.
    parse: (request) => ({ ct: request.required('ct') }),
    run(actor, request, kid) {
      const { key, variant } = mlKemKey(actor, kid)
      const seed = key.secret
      if (!seed) throw new CryptoRefusal('wrong_key_type', 'The key is an ML-KEM public key only')
      if (request.ct.length !== keyTypes[variant].ciphertext)
        throw new CryptoRefusal('bad_length', `\`ct\` of ${variant} must be ${keyTypes[variant].ciphertext} bytes`)
      const secretKey = actor.expanded.get(kid, () => actor.pqc.mlKemKeyPair(variant, seed).secretKey)
      const sharedSecret = actor.pqc.mlKemDecapsulate(variant, secretKey, request.ct)
      try {
        return { alg: variant, ss: encodeBase64(sharedSecret) }
      } finally {
        sharedSecret.fill(0)
      }
    },
  },
}

function mlKemKey(actor: KeystoreContext, kid: string): { key: Readonly<KeyRecord>; variant: MlKemVariant } {
  const key = cryptoKey(actor, kid)
  if (!isKind(key.type, 'mlkem') || !key.publicKey)
    throw new CryptoRefusal('wrong_key_type', 'The key is not an ML-KEM key')
  return { key, variant: key.type }
}
