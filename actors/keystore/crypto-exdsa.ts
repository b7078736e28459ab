import { ED_ALGORITHMS, edCurveOf, type EcdsaDigest, type EdAlgorithm, type SecCurve } from '../../hal/index.js'
import { canSign, encodeBase64, type KeyRecord, keyTypes, LogType } from '../../protocol/index.js'
import { cryptoKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import type { CryptoRequest, SigningFields } from './crypto-request.js'

const ECDSA: Readonly<Record<string, EcdsaDigest>> = {
  SHA256WithECDSA: 'SHA2-256',
  SHA384WithECDSA: 'SHA2-384',
  SHA512WithECDSA: 'SHA2-512',
}
const ALGS = [...Object.keys(ECDSA), ...ED_ALGORITHMS]

interface ExdsaRequest extends SigningFields {
  alg: string
}

/** How a key signs or verifies with an alg: ECDSA on a SECP curve, or an EdDSA variant on its Edwards curve. */
type Scheme = { ecdsa: EcdsaDigest; curve: SecCurve } | { eddsa: EdAlgorithm; context: Uint8Array }

/** `POST /api/crypto/exdsa/sign` and `verify` (crypto-contract §3, §4): DER ECDSA and raw RFC 8032 signatures. */
export const exdsa: { sign: CryptoOperation<ExdsaRequest>; verify: CryptoOperation<ExdsaRequest> } = {
  sign: {
    logType: LogType.CRYPTO_EXDSA_SIGN,
    parse: (request) => parse(request, false),
    run(actor, request, kid) {
      const key = cryptoKey(actor, kid)
      if (!canSign(key.type, key.mode) || !key.secret)
        throw new CryptoRefusal('wrong_key_type', 'The key is not a private key with the ExDSA flag')
      const scheme = schemeOf(key, request)
      const sign =
        'ecdsa' in scheme
          ? actor.engine.ecdsaSign(scheme.curve, key.secret, scheme.ecdsa, request.msg)
          : actor.engine.eddsaSign(scheme.eddsa, key.secret, request.msg, scheme.context)
      return { sign: encodeBase64(sign) }
    },
  },
  verify: {
    logType: LogType.CRYPTO_EXDSA_VERIFY,
    parse: (request) => parse(request, true),
    run(actor, request, kid) {
      // Any key of the curve verifies, whatever its mode, an imported public key too.
      const key = cryptoKey(actor, kid)
      const kind = keyTypes[key.type].kind
      if ((kind !== 'ec' && kind !== 'eddsa') || !key.publicKey)
        throw new CryptoRefusal('wrong_key_type', 'The key is not an ECDSA or EdDSA key')
      const scheme = schemeOf(key, request)
      const signature = request.signature!
      const good =
        'ecdsa' in scheme
          ? actor.engine.ecdsaVerify(scheme.curve, key.publicKey, scheme.ecdsa, request.msg, signature)
          : actor.engine.eddsaVerify(scheme.eddsa, key.publicKey, request.msg, signature, scheme.context)
      if (!good) throw new CryptoRefusal('bad_signature', 'The signature does not verify')
      return undefined
    },
  },
}

function parse(request: CryptoRequest, verify: boolean): ExdsaRequest {
  return { alg: request.choice('alg', ALGS, true)!, ...request.signing(verify) }
}

/** 406 when the alg does not fit the key's curve, or Ed25519ctx comes without a context. */
function schemeOf(key: Readonly<KeyRecord>, request: ExdsaRequest): Scheme {
  const spec = keyTypes[key.type]
  const digest = ECDSA[request.alg]
  if (digest) {
    if (spec.kind !== 'ec') throw new CryptoRefusal('wrong_alg', `${request.alg} needs a SECP key`)
    return { ecdsa: digest, curve: spec.curve }
  }
  const eddsa = request.alg as EdAlgorithm
  if (spec.kind !== 'eddsa' || edCurveOf(eddsa) !== spec.curve)
    throw new CryptoRefusal('wrong_alg', `${request.alg} needs an ${edCurveOf(eddsa)} key`)
  if (eddsa === 'Ed25519ctx' && request.ctx.length === 0)
    throw new CryptoRefusal('context_required', 'Ed25519ctx needs a non-empty `ctx`')
  // Pure Ed25519 has no context: one sent is ignored.
  return { eddsa, context: eddsa === 'Ed25519' ? new Uint8Array(0) : request.ctx }
}
