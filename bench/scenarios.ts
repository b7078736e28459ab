import { encryptRequestBody } from './encrypt-request.js'
import type { Scenario } from './types.js'

const ENCRYPT = '/api/crypto/cipher/encrypt'
const STATUS = '/api/system/status'

export interface ScenarioUrls {
  crypto: string
  bus: string
  get: string
  /** hemd's HTTP and HTTPS base URLs. */
  hemdHttp: string
  hemdHttps: string
}

/**
 * The five loads, in the order a round runs them. The three encrypt loads send byte for byte the
 * same request (the baselines ignore the token), so that they differ only in what serves them.
 */
export function benchScenarios(urls: ScenarioUrls, kid: string, token: string): Scenario[] {
  const encrypt = {
    method: 'POST' as const,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: encryptRequestBody(kid),
  }
  const status = { method: 'GET' as const, headers: {} }
  return [
    { id: 'a', title: 'bare ceiling: uWS + node:crypto AES-256-GCM (HTTPS)', url: urls.crypto + ENCRYPT, ...encrypt },
    { id: 'b', title: 'bus ceiling: uWS -> NATS request -> echo (HTTPS)', url: urls.bus + ENCRYPT, ...encrypt },
    { id: 'c', title: 'hemd POST /api/crypto/cipher/encrypt (HTTPS, journaled)', url: urls.hemdHttps + ENCRYPT, ...encrypt },
    { id: 'd-bare', title: 'bare uWS GET (HTTP)', url: urls.get + STATUS, ...status },
    { id: 'd-hemd', title: 'hemd GET /api/system/status (HTTP)', url: urls.hemdHttp + STATUS, ...status },
  ]
}
