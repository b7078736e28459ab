import { createCipheriv, randomBytes } from 'node:crypto'
import uWS from 'uWebSockets.js'
import { answerJson } from './answer-json.js'
import { parseEncryptRequest } from './encrypt-request.js'
import { listenLocal } from './listen-local.js'
import { RandomPool } from '../actors/keystore/random-pool.js'
import type { ListeningServer, TlsFiles } from './types.js'

/**
 * Baseline (a), the bare ceiling: what uWS and node:crypto can do for an encrypt request with
 * nothing else in the way (no bus, no token, no journal).
 */
export function serveCryptoBaseline(tls: TlsFiles): Promise<ListeningServer> {
  const key = randomBytes(32)
  // The same pooled IVs as hemd's key store.
  const ivs = new RandomPool((n) => randomBytes(n))
  const app = uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile })
  app.post('/*', (res) =>
    answerJson(res, (raw) => {
      const { msg } = parseEncryptRequest(raw)
      const iv = ivs.take(16)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const ciphertext = Buffer.concat([cipher.update(msg), cipher.final()])
      return { ciphertext: ciphertext.toString('base64'), iv: Buffer.from(iv).toString('base64'), tag: cipher.getAuthTag().toString('base64') }
    }),
  )
  return listenLocal(app)
}
