// The certificate the device's HTTPS port serves (GET /api/system/tls): the page cannot read its own TLS
// session's, so it asks. Its fingerprint is computed here from the leaf, never taken from the answer's word.
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { fromBase64, UnexpectedAnswerError } from '../client/browser.js'
import { colonHex } from '../hal/browser.js'
import { deviceRequest } from './device-session.js'

export interface ServedCertificate {
  /** DER, leaf first. */
  chain: Uint8Array[]
  /** SHA-256 of the leaf as people compare it: "3A:0F:…". */
  fingerprint: string
}

export async function servedCertificate(): Promise<ServedCertificate> {
  const answer = (await deviceRequest('/api/system/tls')) as { chain?: unknown; sha256?: unknown } | undefined
  const chain = Array.isArray(answer?.chain) ? answer.chain.map((der) => fromBase64(String(der))) : []
  const leaf = chain[0]
  if (!leaf) throw new UnexpectedAnswerError('the device named no TLS certificate')
  const digest = sha256(leaf)
  if (answer?.sha256 !== bytesToHex(digest))
    throw new UnexpectedAnswerError("the device's TLS fingerprint does not match its certificate")
  return { chain, fingerprint: colonHex(digest) }
}
