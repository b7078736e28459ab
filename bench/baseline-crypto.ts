import { createCipheriv, randomBytes } from 'node:crypto'
import uWS from 'uWebSockets.js'
import { answerJson } from './answer-json.js'
import { ecdhAesKey, gcmOpen, importPrivate, parseDecryptRequest } from './decrypt-request.js'
import { parseEncryptRequest } from './encrypt-request.js'
import { listenLocal } from './listen-local.js'
import { RandomPool } from '../actors/keystore/index.js'
import type { ListeningServer, TlsFiles } from './types.js'

/** The bench's keys for the bare ceiling's decrypts (made by the bench, which seals the requests). */
export interface CryptoBaselineKeys {
  /** AES-256 key, base64. */
  aes: string
  /** X25519 private key, PKCS#8 DER base64 (see exportPrivate). */
  x25519: string
}

/**
 * Baseline (a), the bare ceiling: what uWS and node:crypto can do for a cipher request with
 * nothing else in the way (no bus, no token, no journal). Encrypt with a key of its own; decrypt
 * AES-256-GCM with the bench's key, or, when the request carries a `pubkey`, with the key of an
 * X25519 ECDH and HKDF-SHA256, as the device's indirect decrypt does.
 */
export function serveCryptoBaseline(tls: TlsFiles, keys: CryptoBaselineKeys): Promise<ListeningServer> {
  const key = randomBytes(32)
  const aes = Buffer.from(keys.aes, 'base64')
  const x25519 = importPrivate(keys.x25519)
  // The same pooled IVs as hemd's key store.
  const ivs = new RandomPool((n) => randomBytes(n))
  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  app.post('/api/crypto/cipher/decrypt', (res) =>
    answerJson(res, (raw) => {
      const request = parseDecryptRequest(raw)
      const plaintext = gcmOpen(request.pubkey ? ecdhAesKey(x25519, request.pubkey) : aes, request)
      return { plaintext: plaintext.toString('base64') }
    }),
  )
  app.post('/*', (res) =>
    answerJson(res, (raw) => {
      const { msg } = parseEncryptRequest(raw)
      const iv = ivs.take(16)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const ciphertext = Buffer.concat([cipher.update(msg), cipher.final()])
      return {
        ciphertext: ciphertext.toString('base64'),
        iv: Buffer.from(iv).toString('base64'),
        tag: cipher.getAuthTag().toString('base64'),
      }
    }),
  )
  return listenLocal(app)
}
