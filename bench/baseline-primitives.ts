import { randomBytes } from 'node:crypto'
import uWS from 'uWebSockets.js'
import { RandomPool } from '../actors/keystore/index.js'
import { nativeEngine, postQuantum } from '../hal/index.js'
import { answerJson } from './answer-json.js'
import { listenLocal } from './listen-local.js'
import type { ListeningServer, TlsFiles } from './types.js'

const NO_CONTEXT = new Uint8Array(0)
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

/** The fields of a primitive's request (primitive-loads.ts) the baseline reads. */
function parseRequest(raw: Buffer): { msg: Buffer; alg: unknown } {
  const body = JSON.parse(raw.toString('utf8')) as { msg?: unknown; alg?: unknown }
  return { msg: Buffer.from(typeof body.msg === 'string' ? body.msg : '', 'base64'), alg: body.alg }
}

/**
 * The bare ceiling of each single-primitive load: uWS over TLS and, per request, the same calls of
 * the device's engines (hal/crypto: node:crypto, @noble/post-quantum) on a key held as the key store
 * holds it (a raw scalar, an RFC 8032 seed, an HMAC key, an encapsulation key, an expanded ML-DSA
 * key), with nothing else in the way (no bus, no token, no journal). Its keys are its own, made at
 * start: nothing it answers is checked.
 */
export function servePrimitivesBaseline(tls: TlsFiles): Promise<ListeningServer> {
  // The same pooled randomness as hemd's key store.
  const random = new RandomPool((n) => randomBytes(n)).take
  const ed25519Seed = randomBytes(32)
  const p256 = nativeEngine.generateKeyPair('SECP256R1', random).privateKey
  const hmacKey = randomBytes(32)
  const mlKemPublic = postQuantum.mlKemKeyPair('MLKEM768', randomBytes(64)).publicKey
  // The key store keeps an expanded post-quantum key once used (`expanded` in actors/keystore/).
  const mlDsaSecret = postQuantum.mlDsaKeyPair('MLDSA65', randomBytes(32)).secretKey

  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  app.post('/api/crypto/exdsa/sign', (res) =>
    answerJson(res, (raw) => {
      const { msg, alg } = parseRequest(raw)
      if (alg === 'Ed25519') return { sign: b64(nativeEngine.eddsaSign('Ed25519', ed25519Seed, msg, NO_CONTEXT)) }
      if (alg === 'SHA256WithECDSA') return { sign: b64(nativeEngine.ecdsaSign('SECP256R1', p256, 'SHA2-256', msg)) }
      throw new TypeError(`the baseline signs with Ed25519 or SHA256WithECDSA, not ${String(alg)}`)
    }),
  )
  app.post('/api/crypto/hmac/hash', (res) =>
    answerJson(res, (raw) => ({ mac: b64(nativeEngine.hmac('SHA2-256', hmacKey, parseRequest(raw).msg)) })),
  )
  app.post('/api/crypto/pqc/mlkem/encaps', (res) =>
    answerJson(res, () => {
      const { cipherText, sharedSecret } = postQuantum.mlKemEncapsulate('MLKEM768', mlKemPublic, random)
      // Wiped after encoding, as the key store does.
      const answer = { alg: 'MLKEM768', ss: b64(sharedSecret), ct: b64(cipherText) }
      sharedSecret.fill(0)
      return answer
    }),
  )
  app.post('/api/crypto/pqc/mldsa/sign', (res) =>
    answerJson(res, (raw) => {
      const sign = postQuantum.mlDsaSign('MLDSA65', mlDsaSecret, parseRequest(raw).msg, NO_CONTEXT, random)
      return { alg: 'MLDSA65', sign: b64(sign) }
    }),
  )
  return listenLocal(app)
}
