import { AuthenticationError, SEMIBLOCK } from '../../hal/index.js'
import { encodeBase64, LogType } from '../../protocol/index.js'
import { cryptoKey, derivedSecret, storedAesKey } from './crypto-key.js'
import type { CryptoOperation } from './crypto-operation.js'
import { CryptoRefusal } from './crypto-refusal.js'
import { type CryptoRequest, MSG_BYTES, type Peer } from './crypto-request.js'
import type { KeystoreContext } from './keystore-context.js'

const KEK_BYTES = { AES128: 16, AES192: 24, AES256: 32 } as const
type KekAlg = keyof typeof KEK_BYTES
const ALGS = Object.keys(KEK_BYTES) as KekAlg[]
const CTX_BYTES = 64
const IV_BYTES = 8
/** RFC 3394 wraps at least two 64-bit semiblocks, and adds one. */
const MIN_KEY_DATA = 2 * SEMIBLOCK

interface WrapRequest {
  alg: KekAlg
  msg: Uint8Array
  ctx: Uint8Array
  iv?: Uint8Array
  peer?: Peer
}

/**
 * `POST /api/crypto/cipher/wrap` and `unwrap` (crypto-contract §3, §4): RFC 3394 under a stored
 * AES key cut to the alg's width, or a KEK of HKDF(ECDH secret, "encedo-kek" ‖ ctx).
 */
export const keyWrap: { wrap: CryptoOperation<WrapRequest>; unwrap: CryptoOperation<WrapRequest> } = {
  wrap: {
    logType: LogType.CRYPTO_WRAP,
    parse: (request) => parse(request, MSG_BYTES),
    run(actor, request, kid) {
      if (request.msg.length < MIN_KEY_DATA || request.msg.length % SEMIBLOCK !== 0)
        throw new CryptoRefusal('bad_length', '`msg` must be 16 bytes or more, a multiple of 8')
      return {
        wrapped: encodeBase64(
          withKek(actor, request, kid, (kek) => actor.engine.aesKeyWrap(kek, request.msg, request.iv)),
        ),
      }
    },
  },
  unwrap: {
    logType: LogType.CRYPTO_UNWRAP,
    parse: (request) => parse(request, MSG_BYTES + SEMIBLOCK),
    run(actor, request, kid) {
      if (request.msg.length < MIN_KEY_DATA + SEMIBLOCK || request.msg.length % SEMIBLOCK !== 0)
        throw new CryptoRefusal('bad_length', '`msg` must be 24 bytes or more, a multiple of 8')
      const unwrapped = withKek(actor, request, kid, (kek) => {
        try {
          return actor.engine.aesKeyUnwrap(kek, request.msg, request.iv)
        } catch (err) {
          if (err instanceof AuthenticationError)
            throw new CryptoRefusal('integrity_failed', 'The wrapped key does not pass the integrity check')
          throw err
        }
      })
      return { unwrapped: encodeBase64(unwrapped) }
    },
  },
}

function parse(request: CryptoRequest, maxMsg: number): WrapRequest {
  const msg = request.msg(maxMsg)
  const alg = request.choice('alg', ALGS) ?? 'AES256'
  const ctx = request.bytes('ctx', CTX_BYTES) ?? new Uint8Array(0)
  const iv = request.exactly('iv', IV_BYTES)
  const peer = request.peer()
  return { alg, msg, ctx, ...(iv ? { iv } : {}), ...(peer ? { peer } : {}) }
}

/** `use` with the request's KEK, wiped afterwards. */
function withKek<T>(actor: KeystoreContext, request: WrapRequest, kid: string, use: (kek: Uint8Array) => T): T {
  const key = cryptoKey(actor, kid)
  const width = KEK_BYTES[request.alg]
  const kek = request.peer
    ? derivedSecret(actor, key, request.peer, 'encedo-kek', request.ctx, width)
    : storedAesKey(key, width, request.alg)
  try {
    return use(kek)
  } finally {
    kek.fill(0)
  }
}
